# NVIDIA backend discovery (nvcc, CUDA runtime). Sets ZYFA_CUDA_SUMMARY.
