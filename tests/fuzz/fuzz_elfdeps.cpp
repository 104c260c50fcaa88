// SPDX-License-Identifier: MIT
// libFuzzer: read_elf_dynamic on any bytes, through a memory file (the reader takes a
// path, as the loader does). Not ELF is an error with a reason; nothing crashes or hangs.
#include <switchyard/diagnosis/elfdeps.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <sys/mman.h>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const int fd = ::memfd_create("fuzz_elfdeps", MFD_CLOEXEC);
    static const std::string path = "/proc/self/fd/" + std::to_string(fd);
    if (fd < 0 || ::ftruncate(fd, 0) != 0 ||
        ::pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
        std::abort();
    std::string error;
    const auto info = switchyard::read_elf_dynamic(path, &error);
    if (!info && error.empty())
        __builtin_trap();
    return 0;
}
