// SPDX-License-Identifier: MIT
#include <switchyard/plugins/manifest.h>
#include <switchyard/plugins/pluginprovider.h>
#include <switchyard/plugins/pluginsearchpath.h>

#include "plugins/trust.h"
#include "util/safefile.h"
#include "util/textutil.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <system_error>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

namespace switchyard {
namespace {

using text::dirname_of;

// A folder's entry named like a manifest, with the type readdir() gave it (DT_UNKNOWN where
// the file system does not say).
struct ListedFile {
    std::string name;
    unsigned char type = DT_UNKNOWN;
};

// Reads one manifest through an open descriptor: the trust check costs no extra stat.
// Opened without blocking: a FIFO (or a device) named like a manifest is refused, never
// waited on. `plain_dir`: the folder's path is its real path (no symbolic link, ".", ".." or
// relative part), checked and found safe, so a file in it needs only its own check.
std::shared_ptr<BackendProvider>
read_plugin(int dir_fd, const std::string& dir, const ListedFile& listed,
            const std::string& dir_problem, bool plain_dir,
            const std::shared_ptr<LibraryInspections>& inspections) {
    const std::string& file = listed.name;
    const std::string path = dir + "/" + file;
    auto invalid = [&](std::string why, std::string problem) {
        PluginManifest m;
        m.errors.push_back(std::move(why));
        return std::make_shared<PluginProvider>(path, std::move(m), std::move(problem),
                                                inspections);
    };
    // A regular file by readdir() is neither a folder nor a link: no stat needed to tell.
    bool is_link = false;
    if (listed.type != DT_REG) {
        struct stat st {};
        if (::fstatat(dir_fd, file.c_str(), &st, 0) == 0 && S_ISDIR(st.st_mode))
            return nullptr; // a folder named like a manifest: not a plugin
        struct stat link {};
        is_link = ::fstatat(dir_fd, file.c_str(), &link, AT_SYMLINK_NOFOLLOW) == 0 &&
                  S_ISLNK(link.st_mode);
    }
    std::string text;
    std::string problem = dir_problem;
    try {
        safefile::InputFile in(file, safefile::InputFile::Accept::RegularFile, dir_fd);
        // The folder is checked: a plain manifest needs only its own stat; a symbolic
        // link has its target's every component checked.
        if (problem.empty())
            problem = is_link ? trust::path_problem(path, "manifest", trust::Role::File)
                              : trust::file_problem(in.status(), path, "manifest");
        text = in.read_all(kMaxManifestBytes, "manifest");
    } catch (const safefile::Error& e) {
        // The message names the file relative to the folder; say the whole path.
        std::string why = e.what();
        if (why.rfind(file + ": ", 0) == 0)
            why = why.substr(file.size() + 2);
        return invalid(why, problem);
    }
    auto manifest = PluginManifest::parse(text);
    if (problem.empty() && manifest.is_valid()) {
        // The library is a file name in this folder. In a plain, safe folder a library that is
        // no symbolic link needs one stat (path_problem would stat every folder above it
        // again, per manifest); a link has its target's every component checked, and a
        // missing library is said where it is opened.
        const std::string library = dir + "/" + manifest.library;
        struct stat st {};
        if (plain_dir &&
            ::fstatat(dir_fd, manifest.library.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            !S_ISLNK(st.st_mode))
            problem = trust::file_problem(st, library, "library");
        else
            problem = trust::path_problem(library, "library", trust::Role::File);
    }
    return std::make_shared<PluginProvider>(path, std::move(manifest), std::move(problem),
                                            inspections);
}

} // namespace

std::string untrusted_reason(const std::string& path, const std::string& what) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        return {};
    return trust::path_problem(path, what,
                               S_ISDIR(st.st_mode) ? trust::Role::Folder : trust::Role::File);
}

std::string install_plugin_dir() {
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0)
        return {};
    const std::string exe(buf, std::size_t(n));
    // <prefix>/bin/switchyard-cli -> <prefix>/lib/switchyard/plugins
    const std::filesystem::path prefix = std::filesystem::path(dirname_of(exe)).parent_path();
    return (prefix / "lib" / "switchyard" / "plugins").lexically_normal().string();
}

std::string user_plugin_dir() {
    const char* xdg = std::getenv("XDG_DATA_HOME");
    if (xdg && xdg[0] == '/') // the XDG spec ignores relative values
        return std::string(xdg) + "/switchyard/plugins";
    std::string home;
    if (const char* h = std::getenv("HOME"); h && *h)
        home = h;
    else if (const passwd* pw = ::getpwuid(::getuid()); pw && pw->pw_dir)
        home = pw->pw_dir;
    if (home.empty())
        return {};
    return home + "/.local/share/switchyard/plugins";
}

PluginSearchPath PluginSearchPath::from_dirs(const std::vector<std::string>& dirs) {
    std::vector<PluginSearchDir> out;
    for (const auto& d : dirs)
        out.push_back({d, "explicit"});
    return PluginSearchPath(std::move(out));
}

PluginSearchPath PluginSearchPath::from_environment() {
    std::vector<PluginSearchDir> dirs;
    std::vector<std::string> warnings;
    const char* env = std::getenv("SWITCHYARD_PLUGIN_PATH");
    const std::string value = env ? env : "";
    const auto entries = value.empty() ? std::vector<std::string>{} : text::split(value, ":", true);
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const auto& d = entries[i];
        // An empty or relative entry would search the current folder, whatever it is.
        if (d.empty()) {
            warnings.push_back("SWITCHYARD_PLUGIN_PATH: entry " + std::to_string(i + 1) +
                               " is empty and is ignored; list absolute folders separated by "
                               "':'");
            continue;
        }
        if (d[0] != '/') {
            warnings.push_back("SWITCHYARD_PLUGIN_PATH: the relative entry '" + d +
                               "' is ignored; only absolute folders are searched (write it "
                               "from /)");
            continue;
        }
        // Shown in diagnostics: normalized, without a trailing slash.
        auto path = std::filesystem::path(d).lexically_normal().string();
        while (path.size() > 1 && path.back() == '/')
            path.pop_back();
        dirs.push_back({std::move(path), "SWITCHYARD_PLUGIN_PATH"});
    }
    if (auto user = user_plugin_dir(); !user.empty())
        dirs.push_back({std::move(user), "user"});
    if (auto install = install_plugin_dir(); !install.empty())
        dirs.push_back({std::move(install), "install"});
    PluginSearchPath path(std::move(dirs));
    path.m_warnings = std::move(warnings);
    return path;
}

std::vector<std::shared_ptr<BackendProvider>>
PluginSearchPath::discover(std::vector<PluginDirectoryScan>* scans) const {
    return walk(scans, true);
}

std::vector<PluginDirectoryScan> PluginSearchPath::scan() const {
    std::vector<PluginDirectoryScan> scans;
    walk(&scans, false);
    return scans;
}

std::vector<std::shared_ptr<BackendProvider>>
PluginSearchPath::walk(std::vector<PluginDirectoryScan>* scans, bool read_manifests) const {
    std::vector<std::shared_ptr<BackendProvider>> providers;
    // One library named by many manifests is inspected once per discovery.
    const auto inspections = std::make_shared<LibraryInspections>();
    std::set<std::pair<dev_t, ino_t>> seen;
    for (const auto& dir : m_dirs) {
        PluginDirectoryScan scan;
        scan.dir = dir;
        const int dir_fd = ::open(dir.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct stat st {};
        if (dir_fd < 0 || ::fstat(dir_fd, &st) != 0) {
            if (dir_fd >= 0)
                ::close(dir_fd);
            if (scans)
                scans->push_back(std::move(scan));
            continue;
        }
        scan.exists = true;
        if (!seen.insert({st.st_dev, st.st_ino}).second) {
            scan.duplicate = true;
            ::close(dir_fd);
            if (scans)
                scans->push_back(std::move(scan));
            continue;
        }
        scan.problem = trust::path_problem(dir.path, "plugin folder", trust::Role::Folder);
        char real[PATH_MAX];
        const bool plain_dir =
            scan.problem.empty() && ::realpath(dir.path.c_str(), real) && dir.path == real;
        std::vector<ListedFile> files;
        if (DIR* d = ::fdopendir(::dup(dir_fd))) {
            while (const dirent* e = ::readdir(d)) {
                if (e->d_name[0] == '.' &&
                    (e->d_name[1] == '\0' || (e->d_name[1] == '.' && e->d_name[2] == '\0')))
                    continue;
                if (e->d_type == DT_DIR || !is_manifest_file_name(e->d_name)) {
                    ++scan.skipped_files; // not a manifest: skipped
                    continue;
                }
                files.push_back({e->d_name, e->d_type});
            }
            ::closedir(d);
        }
        std::sort(files.begin(), files.end(),
                  [](const ListedFile& a, const ListedFile& b) { return a.name < b.name; });
        if (!read_manifests) {
            for (const auto& file : files) {
                // What read_plugin() tells apart without reading: a folder is no plugin.
                struct stat entry {};
                if (::fstatat(dir_fd, file.name.c_str(), &entry, 0) == 0 && S_ISDIR(entry.st_mode))
                    ++scan.skipped_files;
                else
                    scan.manifests.push_back(dir.path + "/" + file.name);
            }
            ::close(dir_fd);
            if (scans)
                scans->push_back(std::move(scan));
            continue;
        }
        // Manifests are read and parsed on a few threads (each file on its own: trust checks,
        // parsing and the provider), kept in file order.
        std::vector<std::shared_ptr<BackendProvider>> found(files.size());
        auto read_one = [&](std::size_t i) {
            const auto& file = files[i].name;
            try {
                found[i] =
                    read_plugin(dir_fd, dir.path, files[i], scan.problem, plain_dir, inspections);
            } catch (const std::exception& e) {
                // One manifest never takes the others down: it is listed as invalid.
                PluginManifest m;
                m.errors.push_back(std::string("cannot read the manifest: ") + e.what());
                found[i] = std::make_shared<PluginProvider>(dir.path + "/" + file, std::move(m),
                                                            scan.problem, inspections);
            }
        };
        std::atomic<std::size_t> next{0};
        auto work = [&] {
            for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < files.size();)
                read_one(i);
        };
        constexpr std::size_t kFilesPerThread = 64; // fewer files are read on this thread
        const std::size_t threads =
            std::min<std::size_t>({std::max(1u, std::thread::hardware_concurrency()), 8,
                                   (files.size() + kFilesPerThread - 1) / kFilesPerThread});
        std::vector<std::thread> helpers;
        for (std::size_t t = 1; t < threads; ++t) {
            try {
                helpers.emplace_back(work);
            } catch (const std::system_error&) {
                break; // no thread to be had: this one reads them all
            }
        }
        work();
        for (auto& h : helpers)
            h.join();
        for (std::size_t i = 0; i < files.size(); ++i) {
            if (found[i]) {
                providers.push_back(std::move(found[i]));
                scan.manifests.push_back(dir.path + "/" + files[i].name);
            } else {
                ++scan.skipped_files;
            }
        }
        ::close(dir_fd);
        if (scans)
            scans->push_back(std::move(scan));
    }
    return providers;
}

PluginDiscovery PluginSearchPath::discovery() const {
    return [path = *this]() { return path.discover(); };
}

} // namespace switchyard
