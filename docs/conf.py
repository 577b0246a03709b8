"""Sphinx configuration of problin's documentation.

Why Sphinx: the docstrings are numpydoc, the project's standard, and numpydoc renders them
(and checks them) only under Sphinx; sphinx-gallery runs the scripts in ``examples/`` at
every build and captures their figures and output, so an example that breaks fails the
build; autosummary generates the API reference from the docstrings, so it cannot drift
from the code; myst-parser lets the pages stay Markdown (the design, cost model and
streaming pages are read on GitHub too). Build, warnings as errors:

    python3 -m pip install -e ".[docs]" && python3 -m sphinx -W -b html docs docs/_build/html
"""
from __future__ import annotations

import os

import problin

project = "problin"
author = "problin developers"
copyright = "problin developers, BSD 3-Clause"
version = release = problin.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx.ext.intersphinx",
    "numpydoc",
    "myst_parser",
    "sphinx_gallery.gen_gallery",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
templates_path = ["_templates"]
exclude_patterns = ["_build", "Thumbs.db", ".DS_Store"]

# -- Markdown (MyST) --------------------------------------------------------------------
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# -- API reference: autosummary + numpydoc -------------------------------------------------
autosummary_generate = True
autosummary_imported_members = True
autodoc_typehints = "none"  # the types are in the numpydoc "Parameters" sections
autodoc_default_options = {"members": True, "inherited-members": True}
numpydoc_show_class_members = False  # autosummary lists the members
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_xref_param_type = False


def _skip_foreign_member(app, what, name, obj, skip, options):
    """Document only what problin defines: not scikit-learn's inherited methods
    (``get_params``, ``set_output``, the ``set_*_request`` routers)."""
    if skip or what not in ("class", "exception"):
        return skip
    target = obj.fget if isinstance(obj, property) else obj
    module = getattr(target, "__module__", None) or ""
    if not module.startswith("problin"):
        return True
    return None


def setup(app):
    app.connect("autodoc-skip-member", _skip_foreign_member)


intersphinx_mapping = {
    "python": ("https://docs.python.org/3", None),
    "numpy": ("https://numpy.org/doc/stable/", None),
    "scipy": ("https://docs.scipy.org/doc/scipy/", None),
    "sklearn": ("https://scikit-learn.org/stable/", None),
    "pandas": ("https://pandas.pydata.org/docs/", None),
}
# The build must work offline (the test suite runs it): intersphinx inventories are used
# only when PROBLIN_DOCS_INTERSPHINX=1.
if os.environ.get("PROBLIN_DOCS_INTERSPHINX") != "1":
    intersphinx_mapping = {}

# -- Gallery: the scripts in examples/ run at every build ------------------------------------
sphinx_gallery_conf = {
    "examples_dirs": "../examples",
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "plot_gallery": True,
    "abort_on_example_error": True,
    "only_warn_on_example_error": False,
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "matplotlib_animations": False,
    "image_scrapers": ("matplotlib",),
    "reset_modules": ("matplotlib",),
    # "Examples using X" at the end of each API page (the class template's minigallery)
    "doc_module": ("problin",),
    "backreferences_dir": "gen_modules/backreferences",
}

# Examples plot with Agg, off screen.
os.environ.setdefault("MPLBACKEND", "Agg")

# -- HTML ---------------------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"problin {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_static_path: list[str] = []
html_show_sourcelink = False
