"""The demo notebook is opened by the browser test in JupyterLab; it is not an nbval notebook."""

collect_ignore = ["demo.ipynb", "node_modules"]
