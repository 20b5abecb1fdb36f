"""The local dashboard (voyager-brain ui): pages over every store, served by Starlette.

`projects` finds the projects and keeps what is costly to read; `pages` (the session
brain, the project state, the memory, the overview) and `activity` (the history, the
rules, the pipelines) make each page's data, which is also its JSON twin; `charts`
draws the pictures as SVG; `app` serves them (the token, CSRF, the one write); `server`
runs it. Only `app` and `server` import Starlette and uvicorn (the ``ui`` extra).
"""
