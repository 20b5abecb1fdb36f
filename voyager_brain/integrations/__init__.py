"""Agent integrations: hook commands that drive the BrainManager lifecycle.

Hooks run on every agent turn, so this package imports only the standard library and the
lifecycle, never click; and a hook never breaks the agent: any problem is one line on
stderr and exit code 0.
"""
