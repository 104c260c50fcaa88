// SPDX-License-Identifier: MIT
// The static load simulation against the real loader on this machine's own files: a
// deterministic sample of its multiarch library folder, its Python extension modules and its Qt
// plugins, and mutated copies of its libraries (a needed symbol version renamed, an undefined
// symbol renamed, e_machine set to aarch64, the class set to ELF32, cut to 40 %, a text file
// named as the library) and a library with more initial-exec TLS than the static TLS block has
// left. For each file the cause predicted without loading (diagnose_library +
// predict_load_failure) must equal the cause classified from a real dlopen(RTLD_NOW |
// RTLD_LOCAL) in a child forked from this process (support/realload.h: the same global scope,
// and a crash costs only the child). The agreement table is printed; any disagreement fails
// with the file and both causes.
#include <switchyard/diagnosis/elfdeps.h>
#include <switchyard/diagnosis/loadsim.h>
#include <switchyard/registry/backendcause.h>
#include <switchyard/registry/backendregistry.h>

#include "util/sanitizer.h"

#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QtTest>

#include <elf.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>

#include "support/realload.h"

using namespace switchyard;
namespace fs = std::filesystem;

namespace {

#if defined(__x86_64__)
constexpr const char* kTriple = "x86_64-linux-gnu";
#elif defined(__aarch64__)
constexpr const char* kTriple = "aarch64-linux-gnu";
#else
constexpr const char* kTriple = "";
#endif

// How many of each kind the sample takes (every n-th file of the sorted list).
constexpr std::size_t kSystem = 150, kPython = 40, kQt = 25, kMutants = 10, kAtLeast = 200;

bool is_shared_object_name(const fs::path& p) {
    const auto name = p.filename().string();
    return name.size() > 3 && (name.ends_with(".so") || name.find(".so.") != std::string::npos);
}

// The regular files (not links) under `dir` whose names say shared object, sorted.
std::vector<std::string> shared_objects(const fs::path& dir, bool recursive) {
    std::vector<std::string> out;
    std::error_code ec;
    auto take = [&](const fs::directory_entry& e) {
        if (e.is_regular_file(ec) && !e.is_symlink(ec) && is_shared_object_name(e.path()))
            out.push_back(e.path().string());
    };
    if (recursive) {
        for (fs::recursive_directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
            take(*it);
    } else {
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
            take(*it);
    }
    std::sort(out.begin(), out.end());
    return out;
}

// Every n-th of `files` so that about `count` are taken: deterministic, spread over the list.
std::vector<std::string> every_nth(const std::vector<std::string>& files, std::size_t count) {
    if (files.size() <= count)
        return files;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < count; ++i)
        out.push_back(files[i * files.size() / count]);
    return out;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), std::streamsize(bytes.size()));
}

bool is_native_elf64(const std::string& b) {
    return b.size() > sizeof(Elf64_Ehdr) && b.compare(0, SELFMAG, ELFMAG) == 0 &&
           b[EI_CLASS] == ELFCLASS64 && b[EI_DATA] == ELFDATA2LSB;
}

// The section headers of an ELF64 little-endian file held in `b`.
std::vector<Elf64_Shdr> sections(const std::string& b) {
    Elf64_Ehdr eh;
    std::memcpy(&eh, b.data(), sizeof eh);
    std::vector<Elf64_Shdr> out;
    if (eh.e_shoff == 0 || eh.e_shentsize != sizeof(Elf64_Shdr) ||
        eh.e_shoff + eh.e_shnum * sizeof(Elf64_Shdr) > b.size())
        return out;
    out.resize(eh.e_shnum);
    std::memcpy(out.data(), b.data() + eh.e_shoff, eh.e_shnum * sizeof(Elf64_Shdr));
    return out;
}

// Renames one version the file needs (a DT_VERNEED entry's name: "GLIBC_2.14" ->
// "GLIBC_9.99"), in place: false when it needs none.
bool rename_version_need(std::string& b) {
    for (const auto& sh : sections(b)) {
        if (sh.sh_type != SHT_GNU_verneed)
            continue;
        const auto secs = sections(b);
        if (sh.sh_link >= secs.size())
            return false;
        const auto& strtab = secs[sh.sh_link];
        std::size_t off = sh.sh_offset;
        for (std::size_t i = 0; i < sh.sh_info && off + sizeof(Elf64_Verneed) <= b.size(); ++i) {
            Elf64_Verneed need;
            std::memcpy(&need, b.data() + off, sizeof need);
            std::size_t aux_off = off + need.vn_aux;
            for (unsigned k = 0; k < need.vn_cnt && aux_off + sizeof(Elf64_Vernaux) <= b.size();
                 ++k) {
                Elf64_Vernaux aux;
                std::memcpy(&aux, b.data() + aux_off, sizeof aux);
                const std::size_t at = strtab.sh_offset + aux.vna_name;
                if (!(aux.vna_flags & VER_FLG_WEAK) && at < b.size()) {
                    bool changed = false;
                    for (std::size_t c = at; c < b.size() && b[c]; ++c)
                        if (b[c] >= '0' && b[c] <= '8')
                            b[c] = '9', changed = true;
                    if (changed)
                        return true;
                }
                aux_off += aux.vna_next;
            }
            off += need.vn_next;
        }
    }
    return false;
}

// Renames the first non-weak undefined dynamic symbol the file imports ("malloc" ->
// "Qalloc"), in place: false when it imports none.
bool rename_undefined_symbol(std::string& b) {
    const auto secs = sections(b);
    for (const auto& sh : secs) {
        if (sh.sh_type != SHT_DYNSYM || sh.sh_link >= secs.size() || sh.sh_entsize == 0)
            continue;
        const auto& strtab = secs[sh.sh_link];
        for (std::size_t i = 1; i < sh.sh_size / sh.sh_entsize; ++i) {
            Elf64_Sym sym;
            const std::size_t at = sh.sh_offset + i * sh.sh_entsize;
            if (at + sizeof sym > b.size())
                return false;
            std::memcpy(&sym, b.data() + at, sizeof sym);
            const auto type = ELF64_ST_TYPE(sym.st_info);
            if (sym.st_shndx != SHN_UNDEF || ELF64_ST_BIND(sym.st_info) != STB_GLOBAL ||
                sym.st_name == 0 || (type != STT_FUNC && type != STT_OBJECT))
                continue;
            const std::size_t name = strtab.sh_offset + sym.st_name;
            if (name >= b.size() || !b[name])
                continue;
            b[name] = 'Q';
            return true;
        }
    }
    return false;
}

struct Case {
    std::string kind;
    std::string path;
};

} // namespace

class TestLoadSimCorpus : public QObject {
    Q_OBJECT

    QTemporaryDir m_dir;
    std::vector<Case> m_cases;
    QStringList m_notes; // kinds this machine has none of

    void add(const std::string& kind, const std::vector<std::string>& files) {
        for (const auto& f : files)
            m_cases.push_back({kind, f});
    }

    // Mutated copies of `bases` (healthy libraries of this machine), `kMutants` of each kind.
    void addMutants(const std::vector<std::string>& bases) {
        const std::string dir = m_dir.path().toStdString();
        std::map<std::string, std::size_t> made;
        auto mutant = [&](const std::string& kind, const std::string& base, const char* tag,
                          auto&& mutate) {
            if (made[kind] >= kMutants)
                return;
            std::string bytes = read_file(base);
            if (!mutate(bytes))
                return;
            const auto path = dir + "/" + std::to_string(m_cases.size()) + "-" + tag + "-" +
                              fs::path(base).filename().string();
            write_file(path, bytes);
            m_cases.push_back({kind, path});
            ++made[kind];
        };
        for (const auto& base : bases) {
            mutant("mutant: symbol version renamed", base, "version", rename_version_need);
            mutant("mutant: undefined symbol renamed", base, "symbol", rename_undefined_symbol);
            mutant("mutant: e_machine aarch64", base, "aarch64", [](std::string& b) {
                b[18] = char(EM_AARCH64 & 0xff);
                b[19] = char(EM_AARCH64 >> 8);
                return true;
            });
            mutant("mutant: class ELF32", base, "elf32", [](std::string& b) {
                b[EI_CLASS] = ELFCLASS32;
                return true;
            });
            mutant("mutant: cut to 40 %", base, "cut", [](std::string& b) {
                b.resize(b.size() * 2 / 5);
                return true;
            });
            mutant("mutant: text file", base, "text", [&](std::string& b) {
                // Half short ("file too short"), half long ("invalid ELF header").
                const auto name = fs::path(base).filename().string();
                b = made["mutant: text file"] % 2
                        ? "INPUT(" + name + ")\n"
                        : "This text file is named as the library " + name + ", which it is not.\n";
                return true;
            });
        }
    }

private slots:
    void initTestCase() {
        if (switchyard::kSanitized)
            QSKIP("built with a sanitizer, whose runtime intercepts dlopen and holds static TLS "
                  "of its own: the truth here is the loader of a plain process, which the "
                  "plain build's suite compares with");
        QVERIFY(m_dir.isValid());
        const fs::path multiarch = fs::path("/usr/lib") / kTriple;
        if (!*kTriple || !fs::is_directory(multiarch))
            QSKIP(qPrintable(QStringLiteral("no multiarch library folder %1 on this machine "
                                            "(not a Debian-style system): no corpus to sample")
                                 .arg(QString::fromStdString(multiarch.string()))));
        const auto system = shared_objects(multiarch, false);
        std::vector<std::string> python, qt;
        std::error_code ec;
        for (fs::directory_iterator it("/usr/lib", ec), end; !ec && it != end; it.increment(ec))
            if (it->path().filename().string().starts_with("python3"))
                for (auto& f : shared_objects(it->path() / "lib-dynload", false))
                    python.push_back(std::move(f));
        std::sort(python.begin(), python.end());
        for (const char* qtdir : {"qt6/plugins", "qt5/plugins"})
            for (auto& f : shared_objects(multiarch / qtdir, true))
                qt.push_back(std::move(f));
        if (python.empty())
            m_notes << QStringLiteral(
                "no Python extension modules (/usr/lib/python3*/lib-dynload)");
        if (qt.empty())
            m_notes << QStringLiteral("no Qt plugins (%1/qt6/plugins, qt5/plugins)")
                           .arg(QString::fromStdString(multiarch.string()));

        const auto py = every_nth(python, kPython);
        const auto plugins = every_nth(qt, kQt);
        // At least kAtLeast of the machine's own files: the multiarch folder makes up for
        // kinds this machine lacks.
        const std::size_t others = py.size() + plugins.size();
        const auto sys =
            every_nth(system, std::max(kSystem, kAtLeast > others ? kAtLeast - others : 0));
        add("system library", sys);
        add("Python extension module", py);
        add("Qt plugin", plugins);
        if (m_cases.size() < kAtLeast)
            QSKIP(qPrintable(QStringLiteral("only %1 shared objects on this machine (%2 needed)")
                                 .arg(m_cases.size())
                                 .arg(kAtLeast)));

        // Mutants of healthy native libraries, spread over the folder.
        std::vector<std::string> bases;
        for (const auto& f : every_nth(system, 60)) {
            if (!is_native_elf64(read_file(f)))
                continue;
            if (predict_load_failure(diagnose_library(f)).first == BackendCause::None)
                bases.push_back(f);
        }
        addMutants(bases);

        // Initial-exec TLS: a fixture with 64 KiB of it, and the sanitizer runtimes that carry
        // some (LSan, TSan) where installed.
        std::vector<std::string> tls{SWITCHYARD_FIXTURE_DIR
                                     "/plugins/static_tls/libswitchyard-fixture-static-tls.so"};
        for (const char* name : {"liblsan.so.0", "libtsan.so.2", "libtsan.so.0"})
            if (fs::exists(multiarch / name))
                tls.push_back(fs::canonical(multiarch / name).string());
        add("initial-exec TLS", tls);
    }

    void corpus() {
        QElapsedTimer timer;
        timer.start();
        struct Tally {
            std::size_t count = 0, agree = 0;
        };
        std::map<std::string, Tally> tally;
        std::vector<std::string> order;
        QStringList disagreements;
        std::map<std::string, std::size_t> causes; // the truth's causes, for the note
        qint64 predicting_ns = 0, loading_ns = 0;
        for (const auto& c : m_cases) {
            QElapsedTimer step;
            step.start();
            const auto report = diagnose_library(c.path);
            const auto [predicted, why] = predict_load_failure(report);
            predicting_ns += step.nsecsElapsed();
            step.restart();
            auto truth = test::real_load(c.path);
            loading_ns += step.nsecsElapsed();
            // Where only SWITCHYARD_MAX_ISA stops below a library's x86-64 level, the tool's own
            // refusal is the truth (the loader, judging the CPU, would load it).
            if (predicted == BackendCause::IsaUnsupported && truth.cause == BackendCause::None &&
                report.isa_level_needed <= test::uncapped_isa_level())
                truth = {BackendCause::IsaUnsupported, "refused by the tool: SWITCHYARD_MAX_ISA"};
            if (!tally.count(c.kind))
                order.push_back(c.kind);
            auto& t = tally[c.kind];
            ++t.count;
            ++causes[std::string(to_string(truth.cause))];
            if (predicted == truth.cause) {
                ++t.agree;
                continue;
            }
            disagreements << QStringLiteral("%1 [%2]: predicted %3 (%4); the loader: %5 (%6)")
                                 .arg(QString::fromStdString(c.path),
                                      QString::fromStdString(c.kind),
                                      QString::fromStdString(std::string(to_string(predicted))),
                                      QString::fromStdString(why.substr(0, 300)),
                                      QString::fromStdString(std::string(to_string(truth.cause))),
                                      QString::fromStdString(truth.message.substr(0, 300)));
        }
        qInfo("| kind | files | agree |");
        qInfo("|---|---|---|");
        std::size_t files = 0, agree = 0;
        for (const auto& kind : order) {
            qInfo("| %s | %zu | %zu |", kind.c_str(), tally[kind].count, tally[kind].agree);
            files += tally[kind].count;
            agree += tally[kind].agree;
        }
        qInfo("| all | %zu | %zu |", files, agree);
        std::string seen;
        for (const auto& [cause, n] : causes)
            seen += (seen.empty() ? "" : ", ") + cause + " " + std::to_string(n);
        qInfo("the loader's causes: %s", seen.c_str());
        qInfo("%.1f s: predicting %.1f s, loading %.1f s", timer.elapsed() / 1000.0,
              predicting_ns / 1e9, loading_ns / 1e9);
        for (const auto& note : m_notes)
            qInfo("not sampled: %s", qPrintable(note));
        QVERIFY2(disagreements.isEmpty(), qPrintable(disagreements.join(QLatin1Char('\n'))));
        // Every kind of mutation was made (a machine whose libraries give none would test
        // less than it says).
        for (const char* kind : {"mutant: symbol version renamed",
                                 "mutant: undefined symbol renamed", "mutant: e_machine aarch64",
                                 "mutant: class ELF32", "mutant: cut to 40 %", "mutant: text file"})
            QVERIFY2(tally[kind].count == kMutants, kind);
    }
};

QTEST_GUILESS_MAIN(TestLoadSimCorpus)
#include "tst_loadsim_corpus.moc"
