// SPDX-License-Identifier: MIT
#include "util/safefile.h"
#include "util/textutil.h"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>

#include <sys/sysmacros.h>
#include <unistd.h>

namespace switchyard::safefile {

std::string kind_of(mode_t mode) {
    if (S_ISREG(mode))
        return "a regular file";
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISFIFO(mode))
        return "a FIFO (named pipe)";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    if (S_ISLNK(mode))
        return "a symbolic link";
    return "a special file";
}

std::string size_text(std::size_t bytes) {
    if (bytes >= (std::size_t(1) << 20) && bytes % (std::size_t(1) << 20) == 0)
        return std::to_string(bytes >> 20) + " MiB";
    if (bytes >= 1024 && bytes % 1024 == 0)
        return std::to_string(bytes >> 10) + " KiB";
    return std::to_string(bytes) + " bytes";
}

namespace {

using text::dirname_of;

std::string errno_text(int e) {
    return std::strerror(e);
}

} // namespace

// --- InputFile ---

InputFile::InputFile(const std::string& path, Accept accept, int dir_fd) : m_name(path) {
    m_fd = ::openat(dir_fd, path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (m_fd < 0)
        throw Error(path + ": cannot open: " + errno_text(errno));
    if (::fstat(m_fd, &m_st) != 0) {
        const int e = errno;
        ::close(m_fd);
        throw Error(path + ": cannot read: " + errno_text(e));
    }
    const bool ok =
        S_ISREG(m_st.st_mode) || (accept == Accept::RegularFileOrPipe && S_ISFIFO(m_st.st_mode));
    if (!ok) {
        ::close(m_fd);
        m_fd = -1;
        throw Error(path + ": is " + kind_of(m_st.st_mode) + ", not a regular file");
    }
}

InputFile InputFile::standard_input() {
    InputFile in;
    in.m_name = "standard input";
    in.m_fd = ::dup(STDIN_FILENO);
    if (in.m_fd < 0 || ::fstat(in.m_fd, &in.m_st) != 0)
        throw Error("standard input: cannot read: " + errno_text(errno));
    if (S_ISDIR(in.m_st.st_mode))
        throw Error("standard input: is a folder");
    return in;
}

InputFile::~InputFile() {
    if (m_fd >= 0)
        ::close(m_fd);
}

InputFile::InputFile(InputFile&& other) noexcept
    : m_fd(other.m_fd), m_st(other.m_st), m_name(std::move(other.m_name)) {
    other.m_fd = -1;
}

std::string InputFile::read_all(std::size_t max_bytes, const std::string& what) {
    const auto too_big = [&](const std::string& size) {
        return Error(m_name + ": " + size + " is larger than the " + size_text(max_bytes) + " " +
                     what + " may have");
    };
    std::string text;
    if (S_ISREG(m_st.st_mode)) {
        if (std::uint64_t(m_st.st_size) > max_bytes)
            throw too_big(std::to_string(m_st.st_size) + " bytes");
        text.reserve(std::size_t(m_st.st_size));
    } else {
        // A pipe: wait for its writer like any reader of a pipe does.
        const int flags = ::fcntl(m_fd, F_GETFL);
        if (flags >= 0)
            ::fcntl(m_fd, F_SETFL, flags & ~O_NONBLOCK);
    }
    // Not cleared: read() fills what is used (clearing 64 KiB for each of a thousand
    // manifests was 6 % of discovery's instructions).
    constexpr std::size_t kChunk = 1 << 16;
    const std::unique_ptr<char[]> buf(new char[kChunk]);
    for (;;) {
        const ssize_t n = ::read(m_fd, buf.get(), kChunk);
        if (n == 0)
            break;
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw Error(m_name + ": cannot read: " + errno_text(errno));
        }
        if (text.size() + std::size_t(n) > max_bytes)
            throw too_big("more than " + std::to_string(max_bytes) + " bytes");
        text.append(buf.get(), std::size_t(n));
    }
    return text;
}

// --- write_file ---

namespace {

void write_all(int fd, const std::string& content, const std::string& path) {
    std::size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw Error(path + ": write failed: " + errno_text(errno));
        }
        done += std::size_t(n);
    }
}

std::string basename_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The standard streams by name: always written through.
bool is_stream_name(const std::string& path) {
    return path == "/dev/stdout" || path == "/dev/stderr" || path.rfind("/dev/fd/", 0) == 0 ||
           path.rfind("/proc/self/fd/", 0) == 0;
}

// Writes through an existing non-regular file (a FIFO, a terminal, /dev/null, a standard
// stream): opened without creating or truncating it and without waiting for a reader.
void write_through(const std::string& path, const std::string& content, bool stream) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENXIO)
            throw Error(path + ": is a FIFO that nobody reads; not writing to it");
        throw Error(path + ": cannot open for writing: " + errno_text(errno));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        const int e = errno;
        ::close(fd);
        throw Error(path + ": cannot write: " + errno_text(e));
    }
    const bool is_null = S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3;
    const bool allowed = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || is_null ||
                         (S_ISCHR(st.st_mode) && ::isatty(fd)) || (stream && S_ISREG(st.st_mode));
    if (!allowed) {
        ::close(fd);
        throw Error(path + ": is " + kind_of(st.st_mode) + "; refusing to write to it");
    }
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0)
        ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
    try {
        write_all(fd, content, path);
    } catch (...) {
        ::close(fd);
        throw;
    }
    ::close(fd);
}

// Replaces the regular file `path` (or creates it): exclusive temporary file in the same
// folder, fsync, the old mode, rename.
void replace_atomically(const std::string& path, const std::string& content,
                        const struct stat* old) {
    std::string templ = dirname_of(path) + "/." + basename_of(path) + ".tmp.XXXXXX";
    const int fd = ::mkostemp(templ.data(), O_CLOEXEC); // O_CREAT | O_EXCL: never follows a link
    if (fd < 0)
        throw Error(path + ": cannot create a temporary file in " + dirname_of(path) + ": " +
                    errno_text(errno));
    const std::string tmp = templ;
    try {
        mode_t mode = 0;
        if (old) {
            mode = old->st_mode & 07777;
        } else {
            const mode_t mask = ::umask(0);
            ::umask(mask);
            mode = 0666 & ~mask;
        }
        if (old && ::geteuid() == 0)
            (void)::fchown(fd, old->st_uid, old->st_gid); // root keeps the owner too
        if (::fchmod(fd, mode) != 0)
            throw Error(path + ": cannot set the mode of the temporary file: " + errno_text(errno));
        write_all(fd, content, path);
        if (::fsync(fd) != 0)
            throw Error(path + ": write failed (fsync): " + errno_text(errno));
        if (::close(fd) != 0) {
            const int e = errno;
            ::unlink(tmp.c_str());
            throw Error(path + ": write failed: " + errno_text(e));
        }
    } catch (...) {
        ::close(fd);
        ::unlink(tmp.c_str());
        throw;
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        throw Error(path + ": cannot replace the file: " + errno_text(e));
    }
    const int dir = ::open(dirname_of(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
        (void)::fsync(dir);
        ::close(dir);
    }
}

} // namespace

void write_file(const std::string& path, const std::string& content) {
    if (path.empty())
        throw Error("cannot write to an empty file name");
    if (is_stream_name(path)) {
        write_through(path, content, true);
        return;
    }
    struct stat lst {};
    if (::lstat(path.c_str(), &lst) != 0) {
        if (errno != ENOENT)
            throw Error(path + ": cannot write: " + errno_text(errno));
        replace_atomically(path, content, nullptr);
        return;
    }
    std::string target = path;
    struct stat st = lst;
    if (S_ISLNK(lst.st_mode)) {
        // The link stays; what it leads to is written by the same rules.
        if (::stat(path.c_str(), &st) != 0)
            throw Error(path + ": is a symbolic link that leads nowhere (" + errno_text(errno) +
                        "); not replacing it");
        if (S_ISREG(st.st_mode)) {
            char* resolved = ::realpath(path.c_str(), nullptr);
            if (!resolved)
                throw Error(path + ": cannot resolve the symbolic link: " + errno_text(errno));
            target = resolved;
            std::free(resolved);
        }
    }
    if (S_ISREG(st.st_mode)) {
        replace_atomically(target, content, &st);
        return;
    }
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
        write_through(target, content, false);
        return;
    }
    throw Error(path + ": is " + kind_of(st.st_mode) + "; not replacing it");
}

void check_writable(const std::string& path) {
    if (path.empty())
        throw Error("cannot write to an empty file name");
    if (is_stream_name(path))
        return;
    struct stat st {};
    std::string target = path;
    if (::stat(path.c_str(), &st) == 0) {
        if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
            if (::access(path.c_str(), W_OK) != 0)
                throw Error(path + ": cannot write: " + errno_text(errno));
            return;
        }
        if (!S_ISREG(st.st_mode))
            throw Error(path + ": is " + kind_of(st.st_mode) + "; not replacing it");
        if (char* resolved = ::realpath(path.c_str(), nullptr)) {
            target = resolved;
            std::free(resolved);
        }
    } else if (errno != ENOENT) {
        throw Error(path + ": cannot write: " + errno_text(errno));
    } else {
        struct stat lst {};
        if (::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode))
            throw Error(path + ": is a symbolic link that leads nowhere; not replacing it");
    }
    // The file is written as a temporary file in its folder, then renamed: try that folder.
    const std::string dir = dirname_of(target);
    struct stat dst {};
    if (::stat(dir.c_str(), &dst) != 0)
        throw Error(path + ": the folder " + dir + " cannot be used: " + errno_text(errno));
    if (!S_ISDIR(dst.st_mode))
        throw Error(path + ": " + dir + " is " + kind_of(dst.st_mode) + ", not a folder");
    std::string templ = dir + "/." + basename_of(target) + ".check.XXXXXX";
    const int fd = ::mkstemp(templ.data());
    if (fd < 0)
        throw Error(path + ": cannot create a file in " + dir + ": " + errno_text(errno));
    ::close(fd);
    ::unlink(templ.c_str());
}

} // namespace switchyard::safefile
