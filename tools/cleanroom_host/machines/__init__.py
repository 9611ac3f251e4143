"""The machines a run happens on: the emulator table (emulators), launching one and capturing its records
(runner, progress), what a run says about its machine (machine), the kernel's relocations (relocs), the
duration estimate (estimate, smpestimate, defaults) and LAVA jobs and their logs (lavajob, lavalog).
Imports records and stats."""
