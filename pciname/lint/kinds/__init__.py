"""Lint's rules, one module per kind of object they check, each rule a
function registered with :func:`pciname.lint.rules.rule`: the KubeVirt and
HyperConverged CRs' permittedHostDevices (:mod:`.permitted`), the names VMs
and node pools ask for (:mod:`.vm`), the KubeVirt feature gates VMs need
(:mod:`.gates`), Cozystack node pools' fields
(:mod:`.cozystack`), keys written twice in any mapping (:mod:`.mapping`),
pods with a Kata runtime class (:mod:`.kata`), DRA claims with the VMs
that use them (:mod:`.dra`), the container plugin's names in VMs
(:mod:`.container`), its MIG names in pods and node selectors on its GFD
labels (:mod:`.gfd`) and a note on each GPU name no model judged
(:mod:`.unmodelled`)."""
