// SPDX-License-Identifier: MIT
#pragma once

#include <switchyard/core_export.h>

#include <switchyard/diagnosis/elfdeps.h>

#include <optional>
#include <string>
#include <vector>

namespace switchyard {

/// Where the OpenCL ICD loader looks for vendors, read the way ocl-icd (the loader of
/// Debian's and Ubuntu's libOpenCL.so.1) reads its environment:
/// - `OCL_ICD_VENDORS` unset or empty: every `*.icd` file of `OPENCL_VENDOR_PATH`, else of
///   /etc/OpenCL/vendors;
/// - `OCL_ICD_VENDORS` a folder: every `*.icd` file in it;
/// - else, a name ending in `.icd`: that one file (a bare name is looked for in the vendor
///   folder first, then as given);
/// - else: a library to dlopen directly, with no .icd file.
struct SWITCHYARD_CORE_EXPORT IcdSearch {
    enum class Mode { Folder, File, Library };
    Mode mode = Mode::Folder;
    std::string path;          // the folder, the .icd file or the library name
    std::string origin;        // "OCL_ICD_VENDORS", "OPENCL_VENDOR_PATH" or "default"
    std::string vendor_folder; // where a bare .icd name is looked for first

    /// From this process's environment.
    static IcdSearch from_environment();
    /// From the two variables' values (nullopt: unset).
    static IcdSearch from_values(const std::optional<std::string>& ocl_icd_vendors,
                                 const std::optional<std::string>& opencl_vendor_path);
};

/// One vendor of the ICD loader: its .icd file, the library it names, where the loader
/// would find that library and whether that library's own dependencies resolve. Nothing is
/// loaded.
struct SWITCHYARD_CORE_EXPORT IcdVendor {
    std::string icd_file;     // the .icd file; empty in IcdSearch::Mode::Library
    std::string library;      // as the file's first line names it (the loader's dlopen argument)
    std::string error;        // the .icd file cannot be read, or names nothing
    ResolvedLibrary resolved; // a bare soname as dlopen finds it, else the path
    std::optional<ElfDependencyReport> dependencies; // of the resolved library, when found
    /// Why the loader cannot load the library; empty when it can (as far as ELF tells):
    /// "libfoo.so.1 is not found: searched ...", "/x/libbar.so is not an ELF file",
    /// "libpocl.so.2 needs libLLVM-15.so.1 (needed by ...), which the dynamic loader cannot
    /// find". The cause table's row for it is `icd_library_missing`.
    std::string problem;

    bool ok() const { return problem.empty(); }
};

/// The vendors the ICD loader would try, in file-name order. An .icd file the loader
/// would skip (empty) is listed with its `error`; a folder that does not exist gives none.
SWITCHYARD_CORE_EXPORT std::vector<IcdVendor> find_icd_vendors(const IcdSearch& search);
SWITCHYARD_CORE_EXPORT std::vector<IcdVendor> find_icd_vendors();

} // namespace switchyard
