// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include <sys/stat.h>

namespace switchyard::trust {

/// What a checked path is meant to be.
enum class Role {
    Folder, // a plugin folder: a directory
    File,   // a manifest or a library: a regular file
};

/// The rule of OpenSSH's StrictModes (with Debian's user-private-group refinement),
/// applied to every component from `/` down to `path`, symbolic links resolved one by one
/// and the components of each target checked too:
///  - every component is owned by root or by this user;
///  - no component is writable by other users;
///  - no component is writable by its group, unless the group is the owner's private group
///    (the owner's primary group, named like the owner, with no other members);
///  - a folder above the last component may be writable by others if it has the sticky bit
///    (/tmp): others cannot rename or remove what they do not own there, and the component
///    inside must be owned by this user or root anyway;
///  - the last component is a directory (Folder) or a regular file (File).
/// Returns "" when `path` is safe or does not exist (a missing file is reported elsewhere);
/// else one sentence naming the unsafe component and the fix: `chmod` only where this user
/// owns the component; for another owner it says who owns it; never chmod on a device.
/// `what` names `path` in the message ("plugin folder", "manifest", "library").
std::string path_problem(const std::string& path, const std::string& what, Role role);

/// The same rule for one already-opened last component (its fstat), when every folder
/// above it has been checked: the manifests of a checked plugin folder.
std::string file_problem(const struct stat& st, const std::string& path, const std::string& what);

} // namespace switchyard::trust
