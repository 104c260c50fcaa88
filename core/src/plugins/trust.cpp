// SPDX-License-Identifier: MIT
#include "plugins/trust.h"

#include "util/safefile.h"

#include <climits>
#include <cstdio>
#include <cstring>
#include <deque>
#include <vector>

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

namespace switchyard::trust {
namespace {

// Symbolic links followed in one path before giving up (the kernel's limit is 40).
constexpr int kMaxLinks = 40;

std::string octal_mode(mode_t mode) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "%04o", unsigned(mode & 07777));
    return buf;
}

std::string user_name(uid_t uid) {
    passwd pw{};
    passwd* found = nullptr;
    std::vector<char> buf(16384);
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) == 0 && found)
        return found->pw_name;
    return {};
}

// "root", "bob (uid 1001)", "uid 12345" (no such user).
std::string owner_text(uid_t uid) {
    if (uid == 0)
        return "root";
    const auto name = user_name(uid);
    return name.empty() ? "uid " + std::to_string(uid)
                        : name + " (uid " + std::to_string(uid) + ")";
}

// Debian's OpenSSH refinement of StrictModes: a group-writable file is safe when its group
// is the owner's private group (the owner's primary group, named like the owner, with no
// other listed member).
bool is_private_group(const struct stat& st, std::string* group_name) {
    passwd pw{};
    passwd* owner = nullptr;
    group gr{};
    group* grp = nullptr;
    std::vector<char> pbuf(16384), gbuf(65536);
    if (::getgrgid_r(st.st_gid, &gr, gbuf.data(), gbuf.size(), &grp) != 0 || !grp) {
        *group_name = "gid " + std::to_string(st.st_gid);
        return false;
    }
    *group_name = grp->gr_name;
    if (::getpwuid_r(st.st_uid, &pw, pbuf.data(), pbuf.size(), &owner) != 0 || !owner)
        return false;
    if (owner->pw_gid != st.st_gid || std::strcmp(grp->gr_name, owner->pw_name) != 0)
        return false;
    for (char** m = grp->gr_mem; m && *m; ++m)
        if (std::strcmp(*m, owner->pw_name) != 0)
            return false;
    return true;
}

// How to take write permission `bits` ("o-w", "g-w", "go-w") away from `path`: chmod when
// this user owns it, else who owns it.
std::string write_fix(const struct stat& st, const std::string& path, const std::string& bits) {
    if (st.st_uid == ::geteuid())
        return "run `chmod " + bits + " " + path + "` to use it";
    return "it belongs to " + owner_text(st.st_uid) +
           ", who can remove that permission; or move the plugin to a folder only you or root "
           "can write";
}

// Why one component is unsafe, as "<reason>; <fix>", or "".
// `above`: a folder above the last component (sticky folders may be writable by others).
std::string component_problem(const struct stat& st, const std::string& path, bool above,
                              Role role) {
    if (!above) {
        if (role == Role::File && !S_ISREG(st.st_mode))
            return "is " + safefile::kind_of(st.st_mode) +
                   ", not a regular file; only regular files are loaded";
        if (role == Role::Folder && !S_ISDIR(st.st_mode))
            return "is " + safefile::kind_of(st.st_mode) + ", not a folder";
    }
    if (st.st_uid != 0 && st.st_uid != ::geteuid())
        return "is owned by " + owner_text(st.st_uid) +
               ", not by you or root; only what you or root own is trusted: move the plugin to "
               "a folder you own, or ask " +
               owner_text(st.st_uid) + " or root to install it";
    // A sticky folder above (/tmp): others may add entries but cannot rename or remove
    // ours, and the next component must be ours or root's.
    if (above && S_ISDIR(st.st_mode) && (st.st_mode & S_ISVTX))
        return {};
    const bool other = st.st_mode & S_IWOTH;
    std::string group_name;
    const bool group = (st.st_mode & S_IWGRP) && !is_private_group(st, &group_name);
    if (other && group)
        return "is writable by other users and by group " + group_name + " (mode " +
               octal_mode(st.st_mode) + "); " + write_fix(st, path, "go-w");
    if (other)
        return "is writable by other users (mode " + octal_mode(st.st_mode) + "); " +
               write_fix(st, path, "o-w");
    if (group)
        return "is writable by group " + group_name + " (mode " + octal_mode(st.st_mode) +
               "), which is not your private group; " + write_fix(st, path, "g-w");
    return {};
}

std::string parent_of(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == std::string::npos || slash == 0 ? std::string() : path.substr(0, slash);
}

void push_front_components(std::deque<std::string>& todo, const std::string& path) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= path.size()) {
        auto end = path.find('/', start);
        if (end == std::string::npos)
            end = path.size();
        if (end > start)
            parts.push_back(path.substr(start, end - start));
        start = end + 1;
    }
    todo.insert(todo.begin(), parts.begin(), parts.end());
}

} // namespace

std::string file_problem(const struct stat& st, const std::string& path, const std::string& what) {
    const auto why = component_problem(st, path, false, Role::File);
    return why.empty() ? std::string() : what + " " + path + " " + why;
}

std::string path_problem(const std::string& path, const std::string& what, Role role) {
    if (path.empty())
        return {};
    std::string absolute = path;
    if (absolute[0] != '/') {
        char cwd[PATH_MAX];
        if (!::getcwd(cwd, sizeof cwd))
            return what + " " + path + ": the current folder cannot be read";
        absolute = std::string(cwd) + "/" + path;
    }
    std::deque<std::string> todo;
    push_front_components(todo, absolute);
    // Components are resolved one at a time, as the kernel does: `current` is the real
    // path so far ("" is /), each symbolic link's target is spliced into what is left.
    std::string current, first_link_target;
    int links = 0;
    auto problem = [&](const std::string& component, bool above, const std::string& why) {
        if (component == absolute && !above)
            return what + " " + path + " " + why;
        const std::string link =
            first_link_target.empty() ? "" : " (a symbolic link to " + first_link_target + ")";
        return what + " " + path + link + " is not safe: " + (above ? "folder " : "its target ") +
               component + " " + why;
    };
    auto check = [&](const std::string& component, bool above) -> std::string {
        struct stat st {};
        if (::lstat(component.empty() ? "/" : component.c_str(), &st) != 0)
            return {};
        const auto why = component_problem(st, component.empty() ? "/" : component, above, role);
        return why.empty() ? std::string()
                           : problem(component.empty() ? "/" : component, above, why);
    };
    if (auto why = check("", !todo.empty()); !why.empty())
        return why;
    std::string last_checked;
    while (!todo.empty()) {
        const std::string name = todo.front();
        todo.pop_front();
        if (name == ".")
            continue;
        if (name == "..") {
            current = parent_of(current);
            continue;
        }
        const std::string next = current + "/" + name;
        struct stat st {};
        if (::lstat(next.c_str(), &st) != 0)
            return {}; // missing (or not a folder on the way): said where it is opened
        if (S_ISLNK(st.st_mode)) {
            if (++links > kMaxLinks)
                return what + " " + path + " has too many levels of symbolic links";
            std::vector<char> buf(PATH_MAX + 1);
            const auto n = ::readlink(next.c_str(), buf.data(), buf.size() - 1);
            if (n <= 0)
                return {};
            const std::string target(buf.data(), std::size_t(n));
            if (first_link_target.empty())
                first_link_target = target;
            if (target[0] == '/')
                current.clear();
            push_front_components(todo, target);
            continue;
        }
        const bool above = !todo.empty();
        if (auto why = component_problem(st, next, above, role); !why.empty())
            return problem(next, above, why);
        current = next;
        last_checked = next;
    }
    // A path ending in "." or "..": its real last component was checked as a folder above.
    if (current != last_checked)
        return check(current, false);
    return {};
}

} // namespace switchyard::trust
