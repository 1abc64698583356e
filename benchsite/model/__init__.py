"""The typed model: what recipes declare, what a run stores, what the original pages published.

Pure data and validation: nothing here starts a process or draws a page.
"""
