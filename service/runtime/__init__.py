"""What a running instance needs beside its requests: its worker processes (``workers``,
``lifetime``), its clock, metrics, log and loop-lag probe (``clock``, ``metrics``,
``logs``, ``looplag``), memory given back after bursts (``memory``) and its background
tasks (``background``).
"""
