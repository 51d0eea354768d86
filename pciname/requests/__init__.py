"""What every capability's request shares: the limits declared on its fields
(:mod:`pciname.requests.limits`) and the one rule per field a request
refuses, spelled per surface (:mod:`pciname.requests.spelling`). The request
types themselves, one per capability, live in :mod:`pciname.capabilities`."""
