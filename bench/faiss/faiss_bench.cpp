// FAISS stand-in for `faiss-node` in the ANN benchmark (bench/ann): builds one FAISS index over the
// raw float32 files the bench writes, sweeps one search knob, and prints JSON lines on stdout.
// Compiled by bench/ann/run.ts into bench/build/faiss_bench against Debian's libfaiss-dev:
//   g++ -O2 -std=c++17 -fopenmp faiss_bench.cpp -o faiss_bench -lfaiss -lblas -llapack
//
// Usage:
//   faiss_bench --base F --n N --dim D --queries F --nq Q --k K --metric cosine|l2
//               --index hnsw|ivf|flat [--m M --efc EFC] [--nlist NL]
//               [--sweep v1,v2,...] [--gt F] [--stop-recall R] [--max-seconds S] --out F
//
// Output (one JSON object per line):
//   {"event":"build", "seconds", "threads", "rss_delta", "size", "options", "label"}
//   {"event":"point", "value", "seconds1", "seconds2", "recall_ids"}   per sweep value
// The result ids of every point's one-thread pass are appended to --out as int32 (nq * k, -1 for
// a missing result), in the order of the "point" lines; the bench computes recall from them.
// cosine: the vectors are L2-normalised and searched by inner product (FAISS has no cosine metric).

#include <faiss/IndexFlat.h>
#include <faiss/IndexHNSW.h>
#include <faiss/IndexIVFFlat.h>
#include <faiss/impl/io.h>
#include <faiss/index_io.h>
#include <faiss/utils/distances.h>
#include <faiss/utils/utils.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

namespace {

struct Args {
    std::map<std::string, std::string> kv;
    std::string get(const std::string& k, const std::string& def = "") const {
        auto it = kv.find(k);
        if (it != kv.end()) return it->second;
        if (def.empty()) throw std::runtime_error("missing --" + k);
        return def;
    }
    long num(const std::string& k, const std::string& def = "") const { return std::stol(get(k, def)); }
};

Args parse(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; i++) {
        std::string s = argv[i];
        if (s.rfind("--", 0) != 0 || i + 1 >= argc) throw std::runtime_error("bad argument " + s);
        a.kv[s.substr(2)] = argv[++i];
    }
    return a;
}

std::vector<float> readFloats(const std::string& file, size_t count) {
    std::vector<float> v(count);
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + file);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(count * sizeof(float)));
    if (static_cast<size_t>(in.gcount()) != count * sizeof(float)) throw std::runtime_error(file + ": truncated");
    return v;
}

std::vector<int32_t> readInts(const std::string& file, size_t count) {
    std::vector<int32_t> v(count);
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + file);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(count * sizeof(int32_t)));
    if (static_cast<size_t>(in.gcount()) != count * sizeof(int32_t)) throw std::runtime_error(file + ": truncated");
    return v;
}

long rssBytes() {
    long pages = 0, resident = 0;
    FILE* f = std::fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = -1;
    std::fclose(f);
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string jsonEscape(const std::string& s) {
    std::string o;
    for (char c : s) {
        if (c == '"' || c == '\\') o += '\\';
        if (c == '\n') {
            o += "\\n";
            continue;
        }
        o += c;
    }
    return o;
}

std::vector<long> parseList(const std::string& s) {
    std::vector<long> out;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ','))
        if (!item.empty()) out.push_back(std::stol(item));
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        Args a = parse(argc, argv);
        const size_t n = a.num("n"), d = a.num("dim"), nq = a.num("nq"), k = a.num("k");
        const std::string metric = a.get("metric"), kind = a.get("index");
        const bool cosine = metric == "cosine";
        if (!cosine && metric != "l2") throw std::runtime_error("metric must be cosine or l2");
        const faiss::MetricType mt = cosine ? faiss::METRIC_INNER_PRODUCT : faiss::METRIC_L2;

        std::vector<float> base = readFloats(a.get("base"), n * d);
        std::vector<float> queries = readFloats(a.get("queries"), nq * d);
        if (cosine) {
            faiss::fvec_renorm_L2(d, n, base.data());
            faiss::fvec_renorm_L2(d, nq, queries.data());
        }
        std::vector<int32_t> gt;
        if (a.kv.count("gt")) gt = readInts(a.get("gt"), nq * k);
        const double stopRecall = std::stod(a.get("stop-recall", "2"));
        const double maxSeconds = std::stod(a.get("max-seconds", "1e9"));
        std::vector<long> sweep = parseList(a.get("sweep", "0"));

        const int buildThreads = 2;
        omp_set_num_threads(buildThreads);
        const long rss0 = rssBytes();
        const double t0 = now();
        std::unique_ptr<faiss::Index> index;
        std::unique_ptr<faiss::Index> quantizer;
        std::string label;
        if (kind == "hnsw") {
            const int m = a.num("m"), efc = a.num("efc");
            auto* h = new faiss::IndexHNSWFlat(d, m, mt);
            h->hnsw.efConstruction = efc;
            index.reset(h);
            index->add(n, base.data());
            label = "M=" + std::to_string(m) + " efC=" + std::to_string(efc);
        } else if (kind == "ivf") {
            const size_t nlist = a.num("nlist");
            quantizer.reset(new faiss::IndexFlat(d, mt));
            auto* ivf = new faiss::IndexIVFFlat(quantizer.get(), d, nlist, mt);
            ivf->cp.niter = 10;
            ivf->cp.max_points_per_centroid = 64;
            ivf->cp.seed = 1234;
            index.reset(ivf);
            index->train(n, base.data());
            index->add(n, base.data());
            label = "nlist=" + std::to_string(nlist);
        } else if (kind == "flat") {
            index.reset(new faiss::IndexFlat(d, mt));
            index->add(n, base.data());
            label = "exact";
        } else {
            throw std::runtime_error("index must be hnsw, ivf or flat");
        }
        const double buildSeconds = now() - t0;
        const long rss1 = rssBytes();
        faiss::VectorIOWriter writer;
        faiss::write_index(index.get(), &writer);
        std::printf(
            "{\"event\":\"build\",\"seconds\":%.6f,\"threads\":%d,\"rss_delta\":%ld,\"size\":%zu,\"options\":\"%s\",\"label\":\"%s\"}\n",
            buildSeconds, buildThreads, rss1 - rss0, writer.data.size(), jsonEscape(faiss::get_compile_options()).c_str(),
            jsonEscape(label).c_str());
        std::fflush(stdout);
        writer.data.clear();
        writer.data.shrink_to_fit();

        std::FILE* out = std::fopen(a.get("out").c_str(), "wb");
        if (!out) throw std::runtime_error("cannot write --out");
        std::vector<float> D(nq * k);
        std::vector<decltype(faiss::Index::ntotal)> I(nq * k);  // faiss::idx_t (Index::idx_t before 1.7.4)
        std::vector<int32_t> ids(nq * k);

        auto setKnob = [&](long v) {
            if (auto* h = dynamic_cast<faiss::IndexHNSW*>(index.get())) h->hnsw.efSearch = static_cast<int>(v);
            if (auto* ivf = dynamic_cast<faiss::IndexIVF*>(index.get())) ivf->nprobe = static_cast<size_t>(v);
        };
        // Time a pass over all queries; short passes are repeated (best of up to 3, >= 0.3 s).
        auto timed = [&](int threads) {
            omp_set_num_threads(threads);
            double best = 1e30, total = 0;
            for (int rep = 0; rep < 3 && (rep == 0 || total < 0.3); rep++) {
                const double s = now();
                index->search(nq, queries.data(), k, D.data(), I.data());
                const double e = now() - s;
                best = std::min(best, e);
                total += e;
            }
            return best;
        };

        // Warm-up (page faults, thread pool start) before the first timed pass.
        omp_set_num_threads(2);
        setKnob(sweep.front());
        index->search(std::min<size_t>(nq, 100), queries.data(), k, D.data(), I.data());

        for (long v : sweep) {
            setKnob(v);
            const double s1 = timed(1);
            for (size_t i = 0; i < nq * k; i++) ids[i] = static_cast<int32_t>(I[i]);
            std::fwrite(ids.data(), sizeof(int32_t), ids.size(), out);
            double recall = -1;
            if (!gt.empty()) {
                size_t hit = 0;
                for (size_t q = 0; q < nq; q++) {
                    std::unordered_set<int32_t> truth(gt.begin() + q * k, gt.begin() + (q + 1) * k);
                    for (size_t j = 0; j < k; j++)
                        if (truth.count(ids[q * k + j])) hit++;
                }
                recall = static_cast<double>(hit) / static_cast<double>(nq * k);
            }
            const double s2 = timed(2);
            std::printf("{\"event\":\"point\",\"value\":%ld,\"seconds1\":%.6f,\"seconds2\":%.6f,\"recall_ids\":%.6f}\n", v, s1, s2,
                        recall);
            std::fflush(stdout);
            if (recall >= stopRecall || s1 > maxSeconds) break;
        }
        std::fclose(out);
        return 0;
    } catch (const std::exception& e) {
        std::printf("{\"event\":\"error\",\"message\":\"%s\"}\n", jsonEscape(e.what()).c_str());
        return 1;
    }
}
