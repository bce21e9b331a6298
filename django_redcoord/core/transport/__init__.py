"""How the core reaches Redis: clients, commands, Lua scripts, and the drivers.

* :mod:`.clients`: building clients, the process's shared ones, error translation.
* :mod:`.commands`: one command, one round trip, on a pooled connection; no silent retries.
* :mod:`.scripts`: Lua scripts from ``core/lua/`` by EVALSHA (EVAL after NOSCRIPT).
* :mod:`.drivers`: the steps a primitive yields and the sync and asyncio drivers that run them.
* :mod:`.embedded`: the embedded development server.
"""
