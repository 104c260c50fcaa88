// SPDX-License-Identifier: MIT
// The GPU code a library carries (diagnosis/cudafatbin.h) and the OpenCL ICD loader's
// vendors (diagnosis/openclicd.h), read without loading anything; the doctor's
// icd_library_missing problems.
#include <switchyard/diagnosis/cudafatbin.h>
#include <switchyard/diagnosis/openclicd.h>

#include <QtTest>

#include "support/childprocess.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include <dlfcn.h>
#include <elf.h>

using namespace switchyard;

namespace {

const std::string kFixture = SWITCHYARD_FIXTURE_DIR "/gpucode/libswitchyard-fixture-fatbin.so";
const QString kCudaPlugin =
    QStringLiteral(SWITCHYARD_BUILD_DIR "/lib/switchyard/plugins/libswitchyard-cuda.so");

// A fatbin section written here: containers of {kind, sm, flags} entries, each with an
// 8-byte payload and a 64-byte header.
struct Entry {
    int kind; // 1 PTX, 2 cubin
    int sm;
    std::uint64_t flags = 0x11;
    int ptx_isa = 0; // major x 10 + minor, written as the header's minor and major
};
void put(std::string& out, std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
        out += char((v >> (8 * i)) & 0xff);
}
std::string fatbin(const std::vector<std::vector<Entry>>& containers) {
    std::string out;
    for (const auto& entries : containers) {
        put(out, 0xBA55ED50u, 4);
        put(out, 1, 2);
        put(out, 16, 2);
        put(out, entries.size() * (64 + 8), 8);
        for (const auto& e : entries) {
            std::string h;
            put(h, e.kind, 2);
            put(h, 0x0101, 2);
            put(h, 64, 4);
            put(h, 8, 8); // padded payload
            put(h, 0, 4);
            put(h, 0, 4);
            put(h, e.ptx_isa % 10, 2); // minor
            put(h, e.ptx_isa / 10, 2); // major
            put(h, e.sm, 4);
            put(h, 0, 8);
            put(h, e.flags, 8);
            h.resize(64, '\0');
            out += h + std::string(8, '\x01');
        }
    }
    return out;
}
std::span<const unsigned char> bytes(const std::string& s) {
    return {reinterpret_cast<const unsigned char*>(s.data()), s.size()};
}
CudaGpuCode code_of(const std::string& section) {
    CudaGpuCode code;
    code.readable = code.has_fatbin = true;
    code.images = parse_cuda_fatbin(bytes(section), &code.error, &code.containers);
    return code;
}

std::string names(const std::vector<GpuCodeImage>& images) {
    std::string out;
    for (const auto& i : images)
        out += (out.empty() ? "" : " ") + i.name() + "@" + std::to_string(i.container);
    return out;
}

void write_file(const QString& path, const QByteArray& content) {
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(content);
}

// An ICD folder: good.icd (PoCL's library, as this system names it), missing.icd (a library
// that does not exist), notelf.icd (a text file named as a library; a second line ocl-icd
// ignores). Returns the not-ELF file's path.
QString write_icd_folder(const QTemporaryDir& dir, const std::string& pocl) {
    const auto notelf = dir.filePath("libswitchyard-notelf.so");
    write_file(notelf, "this is not a library\n");
    write_file(dir.filePath("good.icd"), QByteArray::fromStdString(pocl + "\n"));
    write_file(dir.filePath("missing.icd"), "libswitchyard-no-such-icd.so.1\n");
    write_file(dir.filePath("notelf.icd"), notelf.toUtf8() + "\nsecond line ignored\n");
    return notelf;
}

// The first line of /etc/OpenCL/vendors/pocl.icd: PoCL's library as this system names it.
std::string system_pocl_library() {
    std::ifstream in("/etc/OpenCL/vendors/pocl.icd");
    std::string line;
    std::getline(in, line);
    return line;
}

} // namespace

class TestGpuCode : public QObject {
    Q_OBJECT

private slots:
    // The fixture's hand-written section: two containers, headers of 64, 80 and 112 bytes,
    // a compressed PTX, padding after the last container.
    void fixtureSection() {
        const auto code = read_cuda_gpu_code(kFixture);
        QVERIFY2(code.readable, code.error.c_str());
        QVERIFY2(code.error.empty(), code.error.c_str());
        QVERIFY(code.has_fatbin);
        QCOMPARE(code.containers, 2);
        QCOMPARE(names(code.images),
                 std::string("sm_80@0 compute_90@0 sm_90@0 sm_80@1 compute_90@1"));
        QVERIFY(!code.images[0].compressed);
        QVERIFY(code.images[1].compressed);
        QCOMPARE(code.images[1].size, std::uint64_t(16));
        QCOMPARE(names(code.distinct()), std::string("sm_80@0 sm_90@0 compute_90@0"));
        QCOMPARE(code.summary(), std::string("sm_80 and sm_90 cubins and compute_90 PTX"));
        // The PTX entries' headers say PTX ISA 9.0; a cubin has no PTX ISA.
        QCOMPARE(code.images[1].ptx_isa, 90);
        QCOMPARE(code.images[4].ptx_isa, 90);
        QCOMPARE(code.images[0].ptx_isa, 0);
    }

    // What a device's driver must support: the runtime's major (its soname), and the CUDA
    // release of the PTX the driver would JIT there (the fixture's compute_90 is PTX ISA 9.0,
    // CUDA 13.0); the cubin a device runs needs only the runtime's major.
    void driverTooOld_data() {
        QTest::addColumn<int>("cc");
        QTest::addColumn<QString>("driver");
        QTest::addColumn<QString>("runtime"); // a soname of the closure, or empty
        QTest::addColumn<QString>("message"); // empty: the driver is new enough
        QTest::newRow("sm_100 JITs PTX 9.0 on a 12.8 driver")
            << 100 << "12.8"
            << "libcudart.so.12"
            << "CUDA 13.0 on cuda:0 (its compute_90 PTX is PTX ISA 9.0, which the driver must "
               "compile there); the driver supports CUDA 12.8";
        QTest::newRow("sm_100 on a 13.0 driver") << 100 << "13.0"
                                                 << "libcudart.so.13"
                                                 << "";
        QTest::newRow("sm_90 runs its cubin on 12.8") << 90 << "12.8"
                                                      << "libcudart.so.12"
                                                      << "";
        QTest::newRow("sm_90 cubin, runtime 13 on a 12.8 driver")
            << 90 << "12.8"
            << "libcudart.so.13"
            << "CUDA 13.0 on cuda:0 (its CUDA runtime is libcudart.so.13); the driver supports "
               "CUDA 12.8";
        QTest::newRow("sm_75 runs nothing: the runtime alone")
            << 75 << "11.8"
            << "libcudart.so.12"
            << "CUDA 12.0 on cuda:0 (its CUDA runtime is libcudart.so.12); the driver supports "
               "CUDA 11.8";
        QTest::newRow("unknown driver version: not judged") << 100 << ""
                                                            << "libcudart.so.13"
                                                            << "";
        QTest::newRow("statically linked runtime, cubin") << 90 << "11.8"
                                                          << ""
                                                          << "";
    }
    void driverTooOld() {
        QFETCH(int, cc);
        QFETCH(QString, driver);
        QFETCH(QString, runtime);
        QFETCH(QString, message);
        const auto code = read_cuda_gpu_code(kFixture);
        std::vector<std::string> sonames{"libstdc++.so.6"};
        if (!runtime.isEmpty())
            sonames.push_back(runtime.toStdString());
        const std::vector<CudaDeviceArch> devices{
            {"cuda:0", cc, parse_cuda_version(driver.toStdString())}};
        const auto old = driver_too_old(code, sonames, devices);
        if (message.isEmpty()) {
            QVERIFY2(old.empty(), old.empty() ? "" : old[0].message.c_str());
            return;
        }
        QCOMPARE(old.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(old[0].message), message);
        QCOMPARE(old[0].driver, parse_cuda_version(driver.toStdString()));
    }

    void cudaVersions() {
        QCOMPARE(parse_cuda_version("12.4"), 12040);
        QCOMPARE(parse_cuda_version("13.0"), 13000);
        QCOMPARE(parse_cuda_version("12"), 0);
        QCOMPARE(parse_cuda_version("12.4x"), 0);
        QCOMPARE(parse_cuda_version(""), 0);
        QCOMPARE(cuda_version_text(12040), std::string("12.4"));
        QCOMPARE(cuda_version_for_ptx_isa(84), 12040);
        QCOMPARE(cuda_version_for_ptx_isa(86), 12070); // 12.5 and 12.6 both write PTX ISA 8.5
        QCOMPARE(cuda_version_for_ptx_isa(90), 13000);
        QCOMPARE(cuda_version_for_ptx_isa(99), 0);
        // A custom section's PTX ISA, read back.
        const auto code = code_of(fatbin({{{1, 80, 0x11, 84}, {2, 80}}}));
        QCOMPARE(code.images.at(0).ptx_isa, 84);
        QCOMPARE(code.images.at(1).ptx_isa, 0);
    }

    // The CUDA runtime's own words, typed. NVIDIA's strings come from the toolkit's
    // libcudart where it is installed (no driver or GPU needed to ask it).
    void cudaErrorsAreTyped() {
        QCOMPARE(classify_cuda_error("cudaGetDeviceCount: cudaErrorInsufficientDriver: CUDA driver "
                                     "version is insufficient for CUDA runtime version"),
                 std::optional(BackendCause::DriverTooOld));
        QCOMPARE(
            classify_cuda_error("the provided PTX was compiled with an unsupported toolchain."),
            std::optional(BackendCause::DriverTooOld));
        QCOMPARE(classify_cuda_error("no kernel image is available for execution on the device"),
                 std::optional(BackendCause::GpuCodeMissing));
        QCOMPARE(classify_cuda_error("cudaErrorMemoryAllocation: out of memory"), std::nullopt);
        void* cudart = nullptr;
        for (const char* path : {"libcudart.so", "/usr/local/cuda/lib64/libcudart.so"})
            if ((cudart = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
                break;
        if (!cudart)
            QSKIP("no libcudart here to ask for NVIDIA's error strings");
        using Text = const char* (*)(int);
        const auto name = reinterpret_cast<Text>(dlsym(cudart, "cudaGetErrorName"));
        const auto text = reinterpret_cast<Text>(dlsym(cudart, "cudaGetErrorString"));
        QVERIFY(name && text);
        // cudaErrorInsufficientDriver 35, cudaErrorNoKernelImageForDevice 209,
        // cudaErrorUnsupportedPtxVersion 222 (driver_types.h).
        for (const auto& [code, cause] : {std::pair{35, BackendCause::DriverTooOld},
                                          std::pair{209, BackendCause::GpuCodeMissing},
                                          std::pair{222, BackendCause::DriverTooOld}}) {
            QCOMPARE(classify_cuda_error(text(code)), std::optional(cause));
            QCOMPARE(classify_cuda_error(std::string(name(code)) + ": " + text(code)),
                     std::optional(cause));
        }
        dlclose(cudart);
    }

    void judge_data() {
        QTest::addColumn<int>("cc");
        QTest::addColumn<QString>("message"); // empty: the code runs there
        QTest::addColumn<QString>("chosen");  // image_for_device
        QTest::newRow("sm_75: nothing") << 75
                                        << "carries sm_80 and sm_90 cubins and compute_90 PTX; "
                                           "cuda:0 is sm_75: no kernel can run there"
                                        << "";
        QTest::newRow("sm_80: its cubin") << 80 << ""
                                          << "sm_80";
        QTest::newRow("sm_86: sm_80 within the major") << 86 << ""
                                                       << "sm_80";
        QTest::newRow("sm_89") << 89 << ""
                               << "sm_80";
        QTest::newRow("sm_90: the newest cubin") << 90 << ""
                                                 << "sm_90";
        QTest::newRow("sm_100: PTX compiled by the driver") << 100 << ""
                                                            << "compute_90";
        QTest::newRow("sm_120") << 120 << ""
                                << "compute_90";
    }
    void judge() {
        QFETCH(int, cc);
        QFETCH(QString, message);
        QFETCH(QString, chosen);
        const auto code = read_cuda_gpu_code(kFixture);
        const std::vector<CudaDeviceArch> devices{{"cuda:0", cc}};
        const auto missing = gpu_code_missing(code, devices);
        if (message.isEmpty()) {
            QVERIFY(missing.empty());
        } else {
            QCOMPARE(missing.size(), std::size_t(1));
            QCOMPARE(QString::fromStdString(missing[0].message), message);
            QCOMPARE(missing[0].device, std::string("cuda:0"));
            QCOMPARE(missing[0].compute_capability, cc);
            QVERIFY(!missing[0].partial);
        }
        const auto image = image_for_device(code, cc);
        QCOMPARE(image ? QString::fromStdString(image->name()) : QString(), chosen);
    }

    // Two devices: only the one nothing reaches is named.
    void judgeSeveralDevices() {
        const auto code = read_cuda_gpu_code(kFixture);
        const std::vector<CudaDeviceArch> devices{{"cuda:0", 90}, {"cuda:1", 75}, {"cuda:2", 70}};
        const auto missing = gpu_code_missing(code, devices);
        QCOMPARE(missing.size(), std::size_t(2));
        QCOMPARE(missing[0].device, std::string("cuda:1"));
        QCOMPARE(missing[1].device, std::string("cuda:2"));
        QVERIFY(missing[1].message.ends_with("cuda:2 is sm_70: no kernel can run there"));
    }

    // One container (translation unit) reaches the device, the other does not.
    void partialCoverage() {
        const auto code = code_of(fatbin({{{2, 80}, {1, 80}}, {{2, 90}}}));
        QVERIFY2(code.error.empty(), code.error.c_str());
        const std::vector<CudaDeviceArch> devices{{"cuda:0", 86}};
        const auto missing = gpu_code_missing(code, devices);
        QCOMPARE(missing.size(), std::size_t(1));
        QVERIFY(missing[0].partial);
        QCOMPARE(missing[0].message,
                 std::string("carries sm_80 and sm_90 cubins and compute_80 PTX; cuda:0 is "
                             "sm_86: the kernels of 1 of its 2 fatbin containers cannot run "
                             "there"));
    }

    void runsOn_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("sm");
        QTest::addColumn<qulonglong>("flags");
        QTest::addColumn<int>("cc");
        QTest::addColumn<bool>("runs");
        QTest::addColumn<QString>("name");
        const qulonglong plain = 0x11, a = 0x100011, f = 0x200011;
        QTest::newRow("sm_80 on 8.0") << 2 << 80 << plain << 80 << true << "sm_80";
        QTest::newRow("sm_80 on 8.6") << 2 << 80 << plain << 86 << true << "sm_80";
        QTest::newRow("sm_86 on 8.0") << 2 << 86 << plain << 80 << false << "sm_86";
        QTest::newRow("sm_80 on 9.0") << 2 << 80 << plain << 90 << false << "sm_80";
        QTest::newRow("sm_90 on 7.5") << 2 << 90 << plain << 75 << false << "sm_90";
        QTest::newRow("compute_80 on 9.0") << 1 << 80 << plain << 90 << true << "compute_80";
        QTest::newRow("compute_90 on 8.9") << 1 << 90 << plain << 89 << false << "compute_90";
        QTest::newRow("sm_90a on 9.0") << 2 << 90 << a << 90 << true << "sm_90a";
        QTest::newRow("sm_90a on 10.0") << 2 << 90 << a << 100 << false << "sm_90a";
        QTest::newRow("compute_90a on 10.0") << 1 << 90 << a << 100 << false << "compute_90a";
        QTest::newRow("sm_100f on 10.3") << 2 << 100 << f << 103 << true << "sm_100f";
        QTest::newRow("compute_100f on 12.0") << 1 << 100 << f << 120 << false << "compute_100f";
        QTest::newRow("compute_100 on 12.0") << 1 << 100 << plain << 120 << true << "compute_100";
    }
    void runsOn() {
        QFETCH(int, kind);
        QFETCH(int, sm);
        QFETCH(qulonglong, flags);
        QFETCH(int, cc);
        QFETCH(bool, runs);
        QFETCH(QString, name);
        std::string error;
        const auto images = parse_cuda_fatbin(bytes(fatbin({{{kind, sm, flags}}})), &error);
        QVERIFY2(error.empty(), error.c_str());
        QCOMPARE(images.size(), std::size_t(1));
        QCOMPARE(QString::fromStdString(images[0].name()), name);
        QCOMPARE(images[0].runs_on(cc), runs);
    }

    void summaries() {
        QCOMPARE(code_of(fatbin({{{2, 75}}})).summary(), std::string("sm_75 cubin and no PTX"));
        QCOMPARE(code_of(fatbin({{{1, 90}, {1, 80}}})).summary(),
                 std::string("compute_80 and compute_90 PTX and no cubin"));
        QCOMPARE(code_of(fatbin({{{2, 90}, {2, 75}, {2, 80}}, {{2, 80}}})).summary(),
                 std::string("sm_75, sm_80 and sm_90 cubins and no PTX"));
        QCOMPARE(CudaGpuCode{}.summary(), std::string("no GPU code"));
    }

    // Damage stops the walk where it is, keeping what was read before.
    void malformed() {
        const auto good = fatbin({{{2, 80}}, {{2, 90}}});
        std::string error;
        int containers = 0;
        auto images =
            parse_cuda_fatbin(bytes(good.substr(0, good.size() - 4)), &error, &containers);
        QCOMPARE(names(images), std::string("sm_80@0"));
        QVERIFY2(error.find("run past") != std::string::npos, error.c_str());

        auto bad = good;
        bad[88] = '\x42'; // the second container's magic
        error.clear();
        images = parse_cuda_fatbin(bytes(bad), &error);
        QCOMPARE(names(images), std::string("sm_80@0"));
        QVERIFY2(error.find("not a fatbin container") != std::string::npos, error.c_str());

        auto huge = good;
        huge[16 + 8 + 7] = '\x7f'; // the first entry's payload size
        error.clear();
        images = parse_cuda_fatbin(bytes(huge), &error);
        QVERIFY(images.empty());
        QVERIFY2(error.find("entry header size 64") != std::string::npos, error.c_str());
    }

    // A library without the section is no problem by itself: callers decide.
    void noSection() {
        const auto code = read_cuda_gpu_code(SWITCHYARD_FIXTURE_DIR
                                             "/plugins/good/libswitchyard-fixture-good.so");
        QVERIFY2(code.readable, code.error.c_str());
        QVERIFY(!code.has_fatbin);
        QVERIFY(code.images.empty());
        const std::vector<CudaDeviceArch> devices{{"cuda:0", 75}};
        QVERIFY(gpu_code_missing(code, devices).empty());

        QTemporaryDir dir;
        const auto text = dir.filePath("libtext.so");
        write_file(text, "not a library\n");
        const auto notelf = read_cuda_gpu_code(text.toStdString());
        QVERIFY(!notelf.readable);
        QCOMPARE(notelf.error, std::string("not an ELF file"));
        QVERIFY(!read_cuda_gpu_code(dir.path().toStdString()).readable); // a folder
    }

    // The real CUDA plugin's PTX says the PTX ISA of the nvcc that built it: the release
    // `nvcc --version` names is the CUDA version an older driver would be measured against.
    void realPluginPtxIsaIsItsToolkits() {
        if (!QFileInfo::exists(kCudaPlugin))
            QSKIP("the CUDA plugin was not built (SWITCHYARD_ENABLE_CUDA=OFF or no nvcc)");
        const QString nvcc = QFileInfo::exists("/usr/local/cuda/bin/nvcc")
                                 ? "/usr/local/cuda/bin/nvcc"
                                 : QStandardPaths::findExecutable("nvcc");
        if (nvcc.isEmpty())
            QSKIP("nvcc is not installed");
        const auto r = test::run_process(nvcc, {"--version"});
        const auto m = QRegularExpression(R"(release (\d+\.\d+))").match(QString::fromUtf8(r.out));
        QVERIFY2(m.hasMatch(), r.out.constData());
        const int release = parse_cuda_version(m.captured(1).toStdString());
        int ptx = 0;
        for (const auto& image : read_cuda_gpu_code(kCudaPlugin.toStdString()).images)
            if (image.kind == GpuCodeKind::Ptx) {
                ++ptx;
                // The same major and at most the same minor (12.5 and 12.6 write 8.5, the
                // table names the first release that did).
                const int cuda = cuda_version_for_ptx_isa(image.ptx_isa);
                QVERIFY2(cuda / 1000 == release / 1000 && cuda <= release,
                         qPrintable(QString("PTX ISA %1 -> %2, nvcc %3")
                                        .arg(image.ptx_isa)
                                        .arg(cuda)
                                        .arg(release)));
            }
        if (ptx == 0)
            QSKIP("the plugin carries no PTX (SWITCHYARD_CUDA_ARCHITECTURES names only -real)");
    }

    // The real CUDA plugin, built with nvcc: each cubin's own ELF header (written by
    // ptxas, not by the fatbin headers this parser reads) names the same SM.
    void realPluginCubinHeaders() {
        if (!QFileInfo::exists(kCudaPlugin))
            QSKIP("the CUDA plugin was not built (SWITCHYARD_ENABLE_CUDA=OFF or no nvcc)");
        const auto code = read_cuda_gpu_code(kCudaPlugin.toStdString());
        QVERIFY2(code.readable && code.error.empty(), code.error.c_str());
        QVERIFY(code.has_fatbin);
        QVERIFY(!code.images.empty());
        // The payload offsets, walked again from the section: header, then entries.
        QFile f(kCudaPlugin);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QByteArray file = f.readAll();
        const auto* ehdr = reinterpret_cast<const Elf64_Ehdr*>(file.constData());
        const auto* shdrs = reinterpret_cast<const Elf64_Shdr*>(file.constData() + ehdr->e_shoff);
        const char* shstr = file.constData() + shdrs[ehdr->e_shstrndx].sh_offset;
        const Elf64_Shdr* fatbin_section = nullptr;
        for (int i = 0; i < ehdr->e_shnum; ++i)
            if (std::strcmp(shstr + shdrs[i].sh_name, ".nv_fatbin") == 0)
                fatbin_section = &shdrs[i];
        QVERIFY(fatbin_section);
        const char* base = file.constData() + fatbin_section->sh_offset;
        std::size_t pos = 0, index = 0, cubins_checked = 0;
        while (pos + 16 <= fatbin_section->sh_size && index < code.images.size()) {
            std::uint32_t magic;
            std::memcpy(&magic, base + pos, 4);
            if (magic == 0) {
                pos += 8;
                continue;
            }
            std::uint16_t header;
            std::uint64_t size;
            std::memcpy(&header, base + pos + 6, 2);
            std::memcpy(&size, base + pos + 8, 8);
            std::size_t entry = pos + header;
            const std::size_t end = entry + size;
            for (; entry < end; ++index) {
                std::uint32_t entry_header;
                std::uint64_t payload;
                std::memcpy(&entry_header, base + entry + 4, 4);
                std::memcpy(&payload, base + entry + 8, 8);
                const char* data = base + entry + entry_header;
                const auto& image = code.images.at(index);
                if (image.kind == GpuCodeKind::Cubin && !image.compressed &&
                    std::memcmp(data, ELFMAG, SELFMAG) == 0) {
                    const auto* cubin = reinterpret_cast<const Elf64_Ehdr*>(data);
                    QCOMPARE(int(cubin->e_machine), 190); // EM_CUDA
                    // EF_CUDA_SM: bits 8..15 from ELF ABI version 8 (CUDA 13), else 0..7.
                    const int sm = cubin->e_ident[EI_ABIVERSION] >= 8
                                       ? int((cubin->e_flags >> 8) & 0xff)
                                       : int(cubin->e_flags & 0xff);
                    QCOMPARE(sm, image.arch);
                    ++cubins_checked;
                }
                entry += entry_header + payload;
            }
            pos = (end + 7) & ~std::size_t(7);
        }
        QCOMPARE(index, code.images.size());
        QVERIFY(cubins_checked > 0);
        qInfo("%s: %s (%zu images, %zu cubin headers agree)", qPrintable(kCudaPlugin),
              code.summary().c_str(), code.images.size(), cubins_checked);
    }

    // The same plugin against NVIDIA's own reader, where the toolkit has it.
    void realPluginVsCuobjdump() {
        if (!QFileInfo::exists(kCudaPlugin))
            QSKIP("the CUDA plugin was not built (SWITCHYARD_ENABLE_CUDA=OFF or no nvcc)");
        QString cuobjdump = QStandardPaths::findExecutable("cuobjdump");
        if (cuobjdump.isEmpty() && QFileInfo::exists("/usr/local/cuda/bin/cuobjdump"))
            cuobjdump = "/usr/local/cuda/bin/cuobjdump";
        if (cuobjdump.isEmpty())
            QSKIP("cuobjdump is not installed (neither on PATH nor in /usr/local/cuda/bin)");
        const auto r = test::run_process(cuobjdump, {"--list-elf", "--list-ptx", kCudaPlugin});
        QVERIFY2(r.code == 0, r.err.constData());
        // "ELF file    1: libswitchyard-cuda.1.sm_75.cubin", "PTX file    1: ....sm_75.ptx".
        std::multiset<std::string> theirs, ours;
        const QRegularExpression line(R"(^(ELF|PTX) file\s+\d+:.*\.sm_(\d+[af]?)\.(cubin|ptx)$)");
        for (const auto& l : QString::fromUtf8(r.out).split('\n')) {
            const auto m = line.match(l.trimmed());
            if (m.hasMatch())
                theirs.insert((m.captured(1) == "ELF" ? "sm_" : "compute_") +
                              m.captured(2).toStdString());
        }
        for (const auto& image : read_cuda_gpu_code(kCudaPlugin.toStdString()).images)
            ours.insert(image.name());
        QVERIFY2(!theirs.empty(), r.out.constData());
        QCOMPARE(ours, theirs);
    }

    // How ocl-icd reads OCL_ICD_VENDORS and OPENCL_VENDOR_PATH.
    void icdSearch() {
        QTemporaryDir dir;
        using Mode = IcdSearch::Mode;
        auto s = IcdSearch::from_values(std::nullopt, std::nullopt);
        QCOMPARE(int(s.mode), int(Mode::Folder));
        QCOMPARE(s.path, std::string("/etc/OpenCL/vendors"));
        QCOMPARE(s.origin, std::string("default"));
        s = IcdSearch::from_values(std::string(), std::string("/opt/vendors"));
        QCOMPARE(int(s.mode), int(Mode::Folder));
        QCOMPARE(s.path, std::string("/opt/vendors"));
        QCOMPARE(s.origin, std::string("OPENCL_VENDOR_PATH"));
        s = IcdSearch::from_values(dir.path().toStdString(), std::string("/opt/vendors"));
        QCOMPARE(int(s.mode), int(Mode::Folder));
        QCOMPARE(s.path, dir.path().toStdString());
        QCOMPARE(s.origin, std::string("OCL_ICD_VENDORS"));
        s = IcdSearch::from_values(std::string("pocl.icd"), std::nullopt);
        QCOMPARE(int(s.mode), int(Mode::File));
        QCOMPARE(s.vendor_folder, std::string("/etc/OpenCL/vendors"));
        s = IcdSearch::from_values(std::string("libpocl.so.2"), std::nullopt);
        QCOMPARE(int(s.mode), int(Mode::Library));
        s = IcdSearch::from_values(std::string(".icd"), std::nullopt); // ocl-icd: not a name
        QCOMPARE(int(s.mode), int(Mode::Library));
    }

    // A temporary vendor folder: PoCL as the system names it, a library that does not
    // exist, a file that is not ELF, an empty file; other files are not vendors.
    void icdVendors() {
        const auto pocl = system_pocl_library();
        if (pocl.empty())
            QSKIP("/etc/OpenCL/vendors/pocl.icd is missing (Debian: pocl-opencl-icd)");
        QTemporaryDir dir;
        const auto notelf = write_icd_folder(dir, pocl);
        write_file(dir.filePath("empty.icd"), "");
        write_file(dir.filePath("readme.txt"), "libswitchyard-no-such-icd.so.1\n");
        write_file(dir.filePath(".icd"), "libswitchyard-no-such-icd.so.1\n");

        const auto vendors =
            find_icd_vendors(IcdSearch::from_values(dir.path().toStdString(), std::nullopt));
        QCOMPARE(vendors.size(), std::size_t(4));
        std::map<std::string, IcdVendor> by_file;
        for (const auto& v : vendors)
            by_file[QFileInfo(QString::fromStdString(v.icd_file)).fileName().toStdString()] = v;
        QCOMPARE(QFileInfo(QString::fromStdString(vendors[0].icd_file)).fileName(),
                 QString("empty.icd")); // in name order

        const auto& good = by_file.at("good.icd");
        QVERIFY2(good.ok(), good.problem.c_str());
        QCOMPARE(good.library, pocl);
        QVERIFY(good.resolved.found());
        QVERIFY(good.dependencies && good.dependencies->ok());

        const auto& missing = by_file.at("missing.icd");
        QVERIFY(!missing.ok());
        QVERIFY(!missing.resolved.found());
        QVERIFY2(missing.problem.starts_with("libswitchyard-no-such-icd.so.1 is not found"),
                 missing.problem.c_str());

        const auto& bad = by_file.at("notelf.icd");
        QCOMPARE(bad.library, notelf.toStdString());
        QVERIFY2(bad.problem.find("not an ELF file") != std::string::npos, bad.problem.c_str());

        const auto& empty = by_file.at("empty.icd");
        QVERIFY2(empty.problem.find("empty") != std::string::npos, empty.problem.c_str());

        // OCL_ICD_VENDORS naming one .icd file, and naming a library directly.
        auto one = find_icd_vendors(
            IcdSearch::from_values(dir.filePath("missing.icd").toStdString(), std::nullopt));
        QCOMPARE(one.size(), std::size_t(1));
        QCOMPARE(one[0].library, std::string("libswitchyard-no-such-icd.so.1"));
        one = find_icd_vendors(IcdSearch::from_values(pocl, std::nullopt));
        QCOMPARE(one.size(), std::size_t(1));
        QVERIFY(one[0].icd_file.empty());
        QVERIFY2(one[0].ok(), one[0].problem.c_str());
        // A folder that does not exist: no vendor.
        QVERIFY(find_icd_vendors(
                    IcdSearch::from_values(std::nullopt, dir.filePath("none").toStdString()))
                    .empty());
    }

    // Prediction and truth: ocl-icd dlopen()s each vendor's library as the .icd file names
    // it, and a vendor whose dlopen fails is silently not a platform. The prediction (read
    // without loading) is ok exactly where the real loader's dlopen succeeds.
    void icdPredictionAgreesWithDlopen() {
        const auto pocl = system_pocl_library();
        if (pocl.empty())
            QSKIP("/etc/OpenCL/vendors/pocl.icd is missing (Debian: pocl-opencl-icd)");
        QTemporaryDir dir;
        const auto notelf = write_icd_folder(dir, pocl);
        write_file(dir.filePath("missingdep.icd"),
                   QByteArray(SWITCHYARD_FIXTURE_DIR) +
                       "/plugins/missing_dep/libswitchyard-fixture-missing-dep.so\n");
        const auto vendors =
            find_icd_vendors(IcdSearch::from_values(dir.path().toStdString(), std::nullopt));
        QCOMPARE(vendors.size(), std::size_t(4));
        int agree = 0;
        for (const auto& v : vendors) {
            void* handle = dlopen(v.library.c_str(), RTLD_NOW | RTLD_LOCAL);
            const std::string truth = handle ? "loads" : dlerror();
            if (handle)
                dlclose(handle);
            QVERIFY2(
                v.ok() == (handle != nullptr),
                (v.icd_file + ": predicted " + (v.ok() ? "ok" : v.problem) + "; dlopen: " + truth)
                    .c_str());
            ++agree;
        }
        QCOMPARE(agree, 4);
    }

    // The doctor (CLI): the broken vendors are problems with the cause table's fix, in JSON,
    // text and Markdown; the good one is a runtime only.
    void doctorIcdProblems() {
        const auto pocl = system_pocl_library();
        if (pocl.empty())
            QSKIP("/etc/OpenCL/vendors/pocl.icd is missing (Debian: pocl-opencl-icd)");
        QTemporaryDir dir;
        write_file(dir.filePath("good.icd"), QByteArray::fromStdString(pocl + "\n"));
        write_file(dir.filePath("missing.icd"), "libswitchyard-no-such-icd.so.1\n");
        test::ProcessOptions options;
        options.env["OCL_ICD_VENDORS"] = dir.path();
        const auto r = test::run_cli({"doctor", "--json"}, {}, options);
        QVERIFY2(r.code == 0 || r.code == 1, r.err.constData());
        const auto doc = nlohmann::json::parse(r.out.toStdString());
        std::vector<nlohmann::json> icd_problems;
        for (const auto& p : doc.at("problems"))
            if (p.at("cause") == "icd_library_missing")
                icd_problems.push_back(p);
        QCOMPARE(icd_problems.size(), std::size_t(1));
        const auto& p = icd_problems[0];
        QCOMPARE(p.at("subject").get<std::string>(), dir.filePath("missing.icd").toStdString());
        QCOMPARE(p.at("severity").get<std::string>(), std::string("warning"));
        QVERIFY2(p.at("problem").get<std::string>().starts_with(
                     "the OpenCL ICD file names libswitchyard-no-such-icd.so.1, which the ICD "
                     "loader cannot load: libswitchyard-no-such-icd.so.1 is not found"),
                 p.dump().c_str());
        QVERIFY(p.at("fix").get<std::string>().find("stale .icd file") != std::string::npos);
        int icd_rows = 0;
        for (const auto& rt : doc.at("runtimes"))
            if (rt.at("kind") == "opencl-icd") {
                ++icd_rows;
                if (rt.at("name") == "good.icd")
                    QVERIFY(rt.at("detail").get<std::string>().starts_with(pocl + " (found at "));
            }
        QCOMPARE(icd_rows, 2);

        const auto text = test::run_cli({"doctor"}, {}, options);
        QVERIFY2(text.out.contains("which the ICD loader cannot load"), text.out.constData());
        QVERIFY(text.out.contains("stale .icd file"));
        const auto md = test::run_cli({"doctor", "--markdown"}, {}, options);
        QVERIFY2(md.out.contains("missing.icd`: the OpenCL ICD file names"), md.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestGpuCode)
#include "tst_gpucode.moc"
