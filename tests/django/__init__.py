"""The Django layer's tests: settings and checks, decorators and views, the admin, the Tasks
backend, commands, metrics, health and tracing."""
