"""Where the distribution's packages are: everything imports under ``protokube``, while the repository
keeps its top-level folders (pyproject.toml holds the rest of the metadata). Each folder below is
mapped to its import name; every folder inside one is a package of the wheel (gen/'s subfolders are
namespace packages: protoc writes no __init__.py)."""

from setuptools import find_namespace_packages, setup

FOLDERS = {
    "protokube": "protokube",
    "protokube.gateway": "gateway",
    "protokube.server": "server",
    "protokube.gen": "gen",  # the generated code (make gen)
    "protokube.proto": "proto",  # the .proto sources: crd-from-proto's include path, for clients too
}


def packages(package: str, folder: str) -> list[str]:
    """The package of a folder and one for each folder inside it."""
    return [package, *(f"{package}.{sub}" for sub in find_namespace_packages(folder, exclude=["*__pycache__*"]))]


setup(
    package_dir=FOLDERS,
    packages=[name for package, folder in FOLDERS.items() for name in packages(package, folder)],
    package_data={
        "protokube.gateway": ["auth/bootstrap/*.yaml", "wireexplorer/static/*"],
        "protokube.gen": ["*.binpb", "**/*.pyi"],
        "protokube.proto": ["**/*.proto"],
    },
)
