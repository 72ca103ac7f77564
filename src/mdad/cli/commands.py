"""Which module of mdad.cli defines each command: read before any of them is imported (standard library only)."""

# Every command, by the module of mdad.cli that defines it: the one list a new command joins (its module's
# ``@app.command`` refuses a command missing here, with a sentence saying so). Its modules, in this order,
# are the order in which --help lists the commands.
COMMANDS = {
    "info": "data",
    "convert": "data",
    "datasets": "data",
    "select": "micro",
    "estimate": "micro",
    "export": "export",
    "plan": "plan",
    "compare": "plan",
    "run": "run",
    "report": "run",
    "methods": "methods",
}
MODULES = tuple(dict.fromkeys(COMMANDS.values()))
