// SPDX-License-Identifier: MIT
// The files the tuning module keeps in the user's data folder (tuning files, calibrations):
// read whole and parsed, written without destroying anything, the folder made on the way.
#pragma once

#include "util/jsonread.h"
#include "util/safefile.h"
#include "util/textutil.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace switchyard::tuningfile {

/// `decode(document)` of the file at `path` (at most `max_bytes`, `what` names it in the
/// error). Throws std::runtime_error naming the path and what is wrong.
template <class Decode>
auto load(const std::string& path, std::size_t max_bytes, const char* what, Decode decode) {
    try {
        safefile::InputFile in(path, safefile::InputFile::Accept::RegularFileOrPipe);
        return decode(jsonread::parse(in.read_all(max_bytes, what)));
    } catch (const std::exception& e) {
        throw std::runtime_error(text::untrusted(path) + ": " + e.what());
    }
}

/// Writes `document` to `path` (atomic replace), making its folder first. Throws
/// std::runtime_error when it cannot.
inline void save(const std::string& path, const nlohmann::json& document) {
    try {
        std::error_code ec;
        if (const auto folder = std::filesystem::path(path).parent_path(); !folder.empty())
            std::filesystem::create_directories(folder, ec);
        safefile::write_file(path, jsonread::dump(document, 1) + "\n");
    } catch (const safefile::Error& e) {
        throw std::runtime_error(e.what());
    }
}

} // namespace switchyard::tuningfile
