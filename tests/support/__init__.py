"""What the tests share: the servers they start, processes, settings modules, task and job
definitions, the drivers of the contract suites."""
