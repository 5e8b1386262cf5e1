// cuBLAS for labrun's own code (calibration, the built-ins not yet on the SDK): the public facade
// <labrun/cublas.hpp>, loaded with dlopen at run time; implemented in cublas.cpp.
#pragma once

#include <cuda_runtime_api.h>

#include <labrun/cublas.hpp>

#include "cuda_runtime.hpp"
