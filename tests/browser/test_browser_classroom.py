"""Class scale: the Binder/JupyterHub environment (``binder/``, read by repo2docker) stays in
step with the package.  No browser needed; runs under ``make test`` too."""

from __future__ import annotations

import re
import stat
import tomllib

from browser_book import REPO

BINDER = REPO / "binder"


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def pinned_requirements() -> dict[str, str]:
    pins = {}
    for line in (BINDER / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            pins[_name(name)] = version
    return pins


def reader_requirements(*extras: str) -> list[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    needed = project["dependencies"] + [
        r for extra in ("read", *extras) for r in project["optional-dependencies"][extra]
    ]
    return sorted({_name(r) for r in needed} - {"labkit"})


def test_binder_pins_every_package_a_reader_needs():
    pins = pinned_requirements()
    missing = [name for name in reader_requirements() if name not in pins]
    assert not missing, f"binder/requirements.txt lacks {missing} (pyproject.toml's dependencies + [read])"
    missing = [name for name in reader_requirements("dev") if name not in pins]
    assert not missing, f"binder/requirements.txt lacks {missing}: a teacher runs `make test` on the hub ([dev])"
    unpinned = sorted(name for name, version in pins.items() if not version)
    assert not unpinned, f"binder/requirements.txt must pin exact versions (==); unpinned: {unpinned}"


def test_binder_installs_a_cjk_font_that_labkit_looks_for():
    from labkit.reader.style import CJK_FONT_NAMES

    packages = [
        line.strip()
        for line in (BINDER / "apt.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    font_packages = {
        "fonts-wqy-microhei": "WenQuanYi Micro Hei",
        "fonts-wqy-zenhei": "WenQuanYi Zen Hei",
        "fonts-noto-cjk": "Noto Sans CJK SC",
    }
    fonts = [p for p in packages if p in font_packages]
    assert fonts, f"binder/apt.txt installs no CJK font (one of {sorted(font_packages)}); it lists {packages}"
    assert all(font_packages[p] in CJK_FONT_NAMES for p in fonts), (
        f"labkit.reader.style.CJK_FONT_NAMES does not list the font of {fonts}: {CJK_FONT_NAMES}"
    )


def test_postbuild_is_executable_and_installs_labkit_and_the_lab_settings():
    post = BINDER / "postBuild"
    assert post.stat().st_mode & stat.S_IXUSR, "binder/postBuild must be executable (chmod +x)"
    text = post.read_text(encoding="utf-8")
    assert "pip install" in text and " -e ." in text, "postBuild must install labkit from the checkout"
    assert "cp jupyter/overrides.json" in text and "share/jupyter/lab/settings" in text, (
        "postBuild must install jupyter/overrides.json as the environment's JupyterLab settings override"
    )


def test_runtime_python_satisfies_requires_python():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    lowest = tuple(int(x) for x in re.search(r">=\s*(\d+)\.(\d+)", project["requires-python"]).groups())
    runtime = (BINDER / "runtime.txt").read_text(encoding="utf-8").strip()
    match = re.fullmatch(r"python-(\d+)\.(\d+)", runtime)
    assert match, f"binder/runtime.txt must read python-X.Y, got {runtime!r}"
    assert tuple(int(x) for x in match.groups()) >= lowest, f"{runtime} is older than requires-python {lowest}"


def test_postbuild_gives_the_hub_the_jupyterlab_of_make_lab():
    """The contents manager and the kernels' extension that `labkit lab` (so `make lab`) sets."""
    from booklab import launcher as lab

    text = (BINDER / "postBuild").read_text(encoding="utf-8")
    command = lab.lab_command(REPO)
    (manager,) = [arg.split("=", 1)[1] for arg in command if arg.startswith("--ServerApp.contents_manager_class=")]
    assert f'["contents_manager_class"] = "{manager}"' in text and '"jupyter_server_config.json"' in text
    extensions = lab.KERNEL_CONFIG.split("=", 1)[1].strip().replace("'", '"')
    assert f"c.InteractiveShellApp.extensions = {extensions}" in text and "etc/ipython/" in text
    # make test runs with the image's packages: a .venv that sees them, its stamp written last
    assert "venv --system-site-packages .venv" in text and text.index("touch .venv/.installed") > text.index("venv ")
