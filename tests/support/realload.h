// SPDX-License-Identifier: MIT
#pragma once

// The real dynamic loader, the truth the static load simulation (diagnosis/loadsim.h) is
// tested against: dlopen(RTLD_NOW | RTLD_LOCAL) of a file in a child forked from this process
// (so its global scope is this process's, and a crash or a hang costs only the child), its
// message classified the way the plugin loader classifies it.

#include <switchyard/diagnosis/loadsim.h>
#include <switchyard/hardware/isa.h>
#include <switchyard/sdk/errors.h>

#include <dlfcn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

namespace switchyard::test {

struct RealLoad {
    BackendCause cause = BackendCause::None;
    std::string message; // the loader's, or what ended the child
};

/// The loader's verdict on `path`:
/// - it loads: None (then the child exits; nothing stays loaded here);
/// - it refuses: its message, classified (classify_dlopen_error; else a missing file is
///   library_dependency_missing and anything else library_load_failed);
/// - the child dies of SIGBUS inside dlopen: library_truncated (the loader touched a mapped
///   page past the end of the file: a file shorter than its headers say);
/// - a constructor ends the child (exit without dlopen returning): None, since constructors
///   run only once the loader has mapped, versioned and relocated everything;
/// - any other signal: hook_crashed; no answer within `timeout_s`: hook_timed_out.
inline RealLoad real_load(const std::string& path, unsigned timeout_s = 10) {
    int fds[2];
    if (::pipe(fds) != 0)
        return {BackendCause::LibraryLoadFailed, "pipe: " + std::string(std::strerror(errno))};
    const pid_t pid = ::fork();
    if (pid == 0) {
        // Die of what kills it, without the test framework's crash handler (which would run a
        // debugger on the child).
        for (int sig : {SIGBUS, SIGSEGV, SIGABRT, SIGILL, SIGFPE, SIGALRM, SIGTRAP})
            ::signal(sig, SIG_DFL);
        ::close(fds[0]);
        ::alarm(timeout_s);
        ::dlerror();
        void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        const char* error = handle ? nullptr : ::dlerror();
        const std::string answer = handle ? "OK" : std::string("ERR:") + (error ? error : "");
        (void)!::write(fds[1], answer.data(), answer.size());
        ::_exit(0);
    }
    ::close(fds[1]);
    std::string answer;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR);)
        if (n > 0)
            answer.append(buf, std::size_t(n));
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
        const int sig = WTERMSIG(status);
        if (sig == SIGBUS)
            return {BackendCause::LibraryTruncated, "SIGBUS inside dlopen"};
        if (sig == SIGALRM)
            return {BackendCause::HookTimedOut, "dlopen did not return"};
        return {BackendCause::HookCrashed, "signal " + std::to_string(sig) + " inside dlopen"};
    }
    if (answer == "OK")
        return {BackendCause::None, "loads"};
    if (answer.rfind("ERR:", 0) != 0)
        return {BackendCause::None, "loads; a constructor then ended the process (exit " +
                                        std::to_string(WEXITSTATUS(status)) + ")"};
    const std::string message = answer.substr(4);
    if (const auto cause = classify_dlopen_error(message, path))
        return {*cause, message};
    if (message.find("cannot open shared object file") != std::string::npos)
        return {BackendCause::LibraryDependencyMissing, message};
    return {BackendCause::LibraryLoadFailed, message};
}

/// The machine's x86-64 level before any SWITCHYARD_MAX_ISA cap: what the loader judges a
/// library's GNU_PROPERTY_X86_ISA_1_NEEDED against. Where only the cap stops below a library's
/// level, the tool's own refusal (isa_unsupported) is the truth, not the loader's.
inline int uncapped_isa_level() {
    int level = 1;
    for (const auto& l : cpu_isa_cap().detected)
        if (l.rfind("x86-64-v", 0) == 0)
            level = std::max(level, std::atoi(l.c_str() + 8));
    return level;
}

} // namespace switchyard::test
