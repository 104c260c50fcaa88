// SPDX-License-Identifier: MIT
#pragma once
// Which sanitizer this code is built under, if any: the one place that asks the compiler.
// GCC says __SANITIZE_ADDRESS__ / __SANITIZE_THREAD__; clang 14 only answers __has_feature.

#if defined(__SANITIZE_ADDRESS__)
#define SWITCHYARD_SANITIZER_OPTIONS "ASAN_OPTIONS"
#elif defined(__SANITIZE_THREAD__)
#define SWITCHYARD_SANITIZER_OPTIONS "TSAN_OPTIONS"
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SWITCHYARD_SANITIZER_OPTIONS "ASAN_OPTIONS"
#elif __has_feature(thread_sanitizer)
#define SWITCHYARD_SANITIZER_OPTIONS "TSAN_OPTIONS"
#endif
#endif

namespace switchyard {

/// True in an ASan or TSan build: every memory access is checked, so timings (and the
/// probes' ceilings) say nothing about the hardware there.
#ifdef SWITCHYARD_SANITIZER_OPTIONS
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

} // namespace switchyard
