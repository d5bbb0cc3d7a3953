"""The book's tools: building the website and its PDF lecture notes from book/ and _config.yml.

    build      the website with Jupyter Book 1 (Sphinx), student and instructor editions
    editions   the Sphinx extension that removes solutions and teaching notes (student edition)
    instructors  the instructor edition's page for instructors, from the solution notebooks
    execute    the Sphinx extension that runs the chapters missing from the cache in parallel
    pdf        `mlcourse pdf`: chapters printed from the built website
    chromium   a headless Chromium driven over a pipe (printing, and the browser tests)
"""
