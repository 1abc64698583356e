"""The typed model: what recipes declare and what a run stores.

Pure data and validation: nothing here starts a process or draws a page. The words, one per
concept (docs/contributing.rst has the full glossary): a *recipe* declares *subjects* (each with a
*role*: server, ceiling, backend, client) and *cells* (a load tool and its parameters); a *run*
is one execution, stored with the *cell run* of every subject in every cell, each a list of
*repetitions* made in *rounds*; a *figure* is one cell run summarised.
"""
