// SPDX-License-Identifier: MIT
#include "command.h"

#include <switchyard/sdk/errors.h>

#include <algorithm>
#include <iostream>
#include <stdexcept>

namespace switchyard::cli {

void set_action(CLI::App* command, Context& context, std::function<int()> fn) {
    command->callback([&context, fn = std::move(fn)]() {
        try {
            context.exit_code = fn();
        } catch (const InvalidBackend& e) {
            std::cerr << "switchyard-cli: " << e.what() << "\n";
            context.exit_code = Usage;
        } catch (const std::invalid_argument& e) {
            std::cerr << "switchyard-cli: " << e.what() << "\n";
            context.exit_code = Usage;
        } catch (const std::exception& e) {
            std::cerr << "switchyard-cli: " << e.what() << "\n";
            context.exit_code = Failure;
        }
    });
}

std::string format_table(const std::vector<std::string>& header,
                         const std::vector<std::vector<std::string>>& rows) {
    std::vector<std::size_t> width(header.size(), 0);
    auto measure = [&](const std::vector<std::string>& row) {
        for (std::size_t i = 0; i < row.size() && i < width.size(); ++i)
            width[i] = std::max(width[i], row[i].size());
    };
    measure(header);
    for (const auto& r : rows)
        measure(r);
    std::string out;
    auto emit = [&](const std::vector<std::string>& row) {
        std::string line;
        for (std::size_t i = 0; i < row.size() && i < width.size(); ++i) {
            line += row[i];
            if (i + 1 < row.size())
                line += std::string(width[i] - row[i].size() + 2, ' ');
        }
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + "\n";
    };
    emit(header);
    for (const auto& r : rows)
        emit(r);
    return out;
}

} // namespace switchyard::cli
