// SPDX-License-Identifier: MIT
#include <switchyard/diagnosis/openclicd.h>

#include "util/safefile.h"
#include "util/textutil.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

namespace switchyard {
namespace icd {
namespace {

// ocl-icd's compiled-in vendor folder (ETC_OPENCL_VENDORS).
constexpr const char* kDefaultVendorFolder = "/etc/OpenCL/vendors";
// An .icd file holds one path; anything this long is not one.
constexpr std::size_t kMaxIcdFileBytes = 64 * 1024;

std::optional<std::string> env(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::optional<std::string>(value) : std::nullopt;
}

// ocl-icd's _string_end_with(): the suffix, and at least one character before it.
bool ends_with_icd(const std::string& name) {
    return name.size() > 4 && name.compare(name.size() - 4, 4, ".icd") == 0;
}

bool is_directory(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

// The library an .icd file names: its first line without the newline, as ocl-icd's fgets
// reads it (a '\r' or trailing blank stays: dlopen sees it too).
void read_icd_file(IcdVendor& vendor) {
    try {
        safefile::InputFile file(vendor.icd_file, safefile::InputFile::Accept::RegularFile);
        const auto content = file.read_all(kMaxIcdFileBytes, "OpenCL ICD file");
        if (content.empty()) {
            vendor.error = "the file is empty; the ICD loader skips it";
            return;
        }
        vendor.library = content.substr(0, content.find('\n'));
        if (vendor.library.empty())
            vendor.error = "its first line names no library";
    } catch (const safefile::Error& e) {
        vendor.error = e.what();
    }
}

// Where dlopen would find the library, and what stops it.
void resolve(IcdVendor& vendor, const ElfDependencyResolver& resolver) {
    const auto& name = vendor.library;
    vendor.resolved = resolver.resolve_for_process(name);
    if (!vendor.resolved.found()) {
        const bool is_path = name.find('/') != std::string::npos;
        if (!is_path || !exists(name)) {
            vendor.problem =
                text::untrusted(name) + " is not found" +
                (vendor.resolved.detail.empty() ? std::string()
                                                : ": " + text::untrusted(vendor.resolved.detail));
            return;
        }
        // The file is there but the loader's check refuses it: say why.
        vendor.resolved.path = name;
        vendor.resolved.source = LibrarySearchSource::Direct;
        vendor.resolved.detail.clear();
        auto report = resolver.diagnose(name);
        vendor.problem = text::untrusted(name) +
                         (report.readable ? " is ELF of another class or machine than "
                                            "this process"
                                          : " cannot be loaded: " + text::untrusted(report.error));
        vendor.dependencies = std::move(report);
        return;
    }
    auto report = resolver.diagnose(vendor.resolved.path);
    if (!report.readable) {
        vendor.problem = text::untrusted(vendor.resolved.path) +
                         " cannot be loaded: " + text::untrusted(report.error);
    } else if (const auto missing = report.unresolved_with_requester(); !missing.empty()) {
        vendor.problem = text::untrusted(vendor.resolved.path) + " needs " +
                         text::untrusted(text::join(missing, ", ")) +
                         ", which the dynamic loader cannot find";
    }
    vendor.dependencies = std::move(report);
}

} // namespace
} // namespace icd

IcdSearch IcdSearch::from_values(const std::optional<std::string>& ocl_icd_vendors,
                                 const std::optional<std::string>& opencl_vendor_path) {
    IcdSearch search;
    const bool vendor_path_set = opencl_vendor_path && !opencl_vendor_path->empty();
    search.vendor_folder = vendor_path_set ? *opencl_vendor_path : icd::kDefaultVendorFolder;
    if (!ocl_icd_vendors || ocl_icd_vendors->empty()) {
        search.mode = Mode::Folder;
        search.path = search.vendor_folder;
        search.origin = vendor_path_set ? "OPENCL_VENDOR_PATH" : "default";
        return search;
    }
    search.origin = "OCL_ICD_VENDORS";
    search.path = *ocl_icd_vendors;
    if (icd::is_directory(search.path))
        search.mode = Mode::Folder;
    else if (icd::ends_with_icd(search.path))
        search.mode = Mode::File;
    else
        search.mode = Mode::Library;
    return search;
}

IcdSearch IcdSearch::from_environment() {
    return from_values(icd::env("OCL_ICD_VENDORS"), icd::env("OPENCL_VENDOR_PATH"));
}

std::vector<IcdVendor> find_icd_vendors(const IcdSearch& search) {
    std::vector<IcdVendor> vendors;
    switch (search.mode) {
    case IcdSearch::Mode::Folder: {
        std::error_code ec;
        std::vector<std::string> files;
        for (const auto& entry : std::filesystem::directory_iterator(search.path, ec)) {
            const auto name = entry.path().filename().string();
            if (icd::ends_with_icd(name))
                files.push_back(entry.path().string());
        }
        std::sort(files.begin(), files.end());
        for (auto& f : files) {
            IcdVendor vendor;
            vendor.icd_file = std::move(f);
            vendors.push_back(std::move(vendor));
        }
        break;
    }
    case IcdSearch::Mode::File: {
        // A bare name: the vendor folder's file of that name first, then the name as given.
        std::string file = search.path;
        if (file.find('/') == std::string::npos) {
            const auto in_folder = search.vendor_folder + "/" + file;
            if (icd::exists(in_folder))
                file = in_folder;
        }
        IcdVendor vendor;
        vendor.icd_file = file;
        vendors.push_back(std::move(vendor));
        break;
    }
    case IcdSearch::Mode::Library: {
        IcdVendor vendor;
        vendor.library = search.path;
        vendors.push_back(std::move(vendor));
        break;
    }
    }
    const ElfDependencyResolver resolver;
    for (auto& vendor : vendors) {
        if (!vendor.icd_file.empty())
            icd::read_icd_file(vendor);
        if (!vendor.error.empty()) {
            vendor.problem = text::untrusted(vendor.error);
            continue;
        }
        icd::resolve(vendor, resolver);
    }
    return vendors;
}

std::vector<IcdVendor> find_icd_vendors() {
    return find_icd_vendors(IcdSearch::from_environment());
}

} // namespace switchyard
