# gfx950 toolchain discovery (native ROCm or the Debian sid sysroot). Sets ZYFA_AMD_TOOLCHAIN_SUMMARY.
