"""Sphinx configuration of the benchmark site."""

project = "Reproducible web-server benchmarks"
author = "The benchmark site's contributors"
copyright = "2026, " + author

extensions = ["benchsite.sphinxext", "sphinx_copybutton"]
# The PDF (`invoke pdf`, rinohtype's builder) is built with the tag "pdf".
if tags.has("pdf"):  # noqa: F821 - Sphinx provides `tags` to conf.py
    from benchsite.sphinxext.pdf_template import pdf_template

    extensions.append("rinoh.frontend.sphinx")
    rinoh_documents = [
        {
            "doc": "index",
            "target": "benchmarks",
            "title": project,
            "subtitle": "Every page, with its charts",
            "template": pdf_template(),
        }
    ]
# Copy buttons copy the command, not the prompt or the comments' output.
copybutton_prompt_text = "$ "
copybutton_only_copy_prompt_lines = True
copybutton_line_continuation_character = "\\"
html_theme = "sphinx_rtd_theme"
html_static_path = ["_static"]
# Written in the form the theme and Sphinx leave them in, so that a rebuild with nothing changed
# finds the configuration unchanged (and re-reads nothing).
html_css_files = [("bench.css", {"priority": 800})]
html_permalinks_icon = "\uf0c1"
jquery_use_sri = False
html_theme_options = {"navigation_depth": 3}
exclude_patterns = ["_build"]

# Where the benchmark runs are read from, relative to this file.
bench_data_dir = "../data"

# Labels and commands from the data must appear verbatim (no curly quotes, no en dashes).
smartquotes = False
html_favicon = "_static/favicon.svg"
