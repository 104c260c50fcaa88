// SPDX-License-Identifier: MIT
#pragma once

#include <CL/cl.h>

#include <string>

namespace switchyard::opencl {

/// "CL_OUT_OF_RESOURCES" for -5, "CL_PLATFORM_NOT_FOUND_KHR" for -1001, "CL_UNKNOWN_ERROR"
/// for a code this table lacks.
const char* error_name(cl_int code) noexcept;

/// "clGetPlatformIDs: -1001 CL_PLATFORM_NOT_FOUND_KHR", the way clinfo reports a failed call.
std::string describe_error(const char* call, cl_int code);

/// Throws std::runtime_error(describe_error(call, code)) unless code is CL_SUCCESS.
void check(cl_int code, const char* call);

} // namespace switchyard::opencl
