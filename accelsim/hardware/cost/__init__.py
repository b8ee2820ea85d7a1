"""The built-in kinds, one module each: a compute dataclass, `costs(works, hw)` and the `KIND` record
(registered by name in `accelsim.hardware.kinds.BUILTIN`)."""
