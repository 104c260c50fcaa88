// SPDX-License-Identifier: MIT
#pragma once

// Reading and writing files that other people may have prepared.
//
// Reading never blocks on a special file: the file is opened with O_NONBLOCK, then
// fstat() says what it is; anything but a regular file (or, where the caller allows it, a
// pipe) is refused with a message naming what it is ("is a FIFO, not a regular file").
//
// Writing never destroys anything (write_file()):
// - a regular file (or a new one) is replaced atomically: a temporary file created
//   exclusively with mkstemp() in the target's folder (never following a link), written,
//   fsync()ed, given the old file's mode, then renamed over the target;
// - a symbolic link is kept: when it leads to a regular file, that file is replaced as
//   above (the link still points at it); otherwise its target is treated as below;
// - a FIFO, a terminal, /dev/null and the standard streams (/dev/stdout, /dev/fd/N,
//   /proc/self/fd/N) are written through, never replaced;
// - anything else (a folder, a block device, another character device, a socket) is
//   refused with the reason.
// A failed write leaves the previous file as it was.

#include <cstddef>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>

namespace switchyard::safefile {

/// A file that cannot be read or written: what() says which and why.
class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// "a folder", "a FIFO", "a character device", ...: what a file of `mode` is.
std::string kind_of(mode_t mode);

/// An open file to read from; closes it on destruction.
class InputFile {
public:
    enum class Accept { RegularFile, RegularFileOrPipe };

    /// Opens `path` (relative to `dir_fd` when not absolute) without blocking. Throws Error
    /// "PATH: cannot open: ..." or "PATH: is a FIFO, not a regular file".
    InputFile(const std::string& path, Accept accept, int dir_fd = AT_FDCWD);
    /// The standard input, whatever it is (a pipe, a file, a terminal).
    static InputFile standard_input();
    ~InputFile();
    InputFile(InputFile&& other) noexcept;
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;
    InputFile& operator=(InputFile&&) = delete;

    const struct stat& status() const noexcept { return m_st; }
    const std::string& name() const noexcept { return m_name; }
    /// Everything, at most `max_bytes`; throws Error ("N bytes is larger than the M MiB
    /// a WHAT may have") beyond, or when reading fails.
    std::string read_all(std::size_t max_bytes, const std::string& what);

private:
    InputFile() = default;
    int m_fd = -1;
    struct stat m_st {};
    std::string m_name;
};

/// Writes `content` to `path` by the rules above; throws Error naming the path and why.
void write_file(const std::string& path, const std::string& content);

/// Whether write_file(path, ...) could write now, without writing it: the target is a kind
/// write_file writes (a regular file or none, a FIFO, a terminal, a standard stream) and a
/// file can be created in its folder (one is created and removed). Throws Error naming the
/// path and why. For a command that checks its output before long work.
void check_writable(const std::string& path);

/// "1 MiB", "512 MiB", "4 KiB", "17 bytes".
std::string size_text(std::size_t bytes);

} // namespace switchyard::safefile
