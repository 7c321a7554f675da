// Exact ground truth for the ANN benchmark: brute force over every indexed vector, distances
// accumulated in double precision, for the unfiltered case and each filter `bucket < T` at once.
// Compiled by bench/ann/run.ts into bench/build/groundtruth (g++ -O3 -march=native -fopenmp-simd
// -pthread); bench/ann/gt-worker.ts is the slower pure-JS fallback with the same definition.
//
// Usage:
//   groundtruth --base F --n N --dim D --queries F --nq Q --k K --metric cosine|l2
//               --buckets F (uint16 per indexed vector) --thresholds 500,100,10,1 --threads T --out F
// Output: for each case (unfiltered first, then the thresholds in the order given), for each query:
//   K int32 ids (ascending distance, -1 padded) then K float64 distances (+inf padded).
// Distances: cosine 1 - q.x / (|q| |x|); l2 the squared Euclidean distance.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

template <class T>
std::vector<T> readFile(const std::string& file, size_t count) {
    std::vector<T> v(count);
    std::ifstream in(file, std::ios::binary);
    if (!in) throw std::runtime_error("cannot open " + file);
    in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(count * sizeof(T)));
    if (static_cast<size_t>(in.gcount()) != count * sizeof(T)) throw std::runtime_error(file + ": truncated");
    return v;
}

double dotD(const float* a, const float* b, size_t d) {
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (size_t i = 0; i < d; i++) s += static_cast<double>(a[i]) * static_cast<double>(b[i]);
    return s;
}

double l2D(const float* a, const float* b, size_t d) {
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (size_t i = 0; i < d; i++) {
        const double t = static_cast<double>(a[i]) - static_cast<double>(b[i]);
        s += t * t;
    }
    return s;
}

struct TopK {
    size_t k, size = 0;
    std::vector<int32_t> ids;
    std::vector<double> d;
    explicit TopK(size_t kk) : k(kk), ids(kk, -1), d(kk, std::numeric_limits<double>::infinity()) {}
    double worst() const { return size < k ? std::numeric_limits<double>::infinity() : d[k - 1]; }
    void push(int32_t id, double dist) {
        size_t i = std::min(size, k - 1);
        while (i > 0 && d[i - 1] > dist) {
            d[i] = d[i - 1];
            ids[i] = ids[i - 1];
            i--;
        }
        d[i] = dist;
        ids[i] = id;
        if (size < k) size++;
    }
};

}  // namespace

int main(int argc, char** argv) {
    try {
        std::map<std::string, std::string> a;
        for (int i = 1; i + 1 < argc; i += 2) a[std::string(argv[i]).substr(2)] = argv[i + 1];
        auto get = [&](const char* key) {
            auto it = a.find(key);
            if (it == a.end()) throw std::runtime_error(std::string("missing --") + key);
            return it->second;
        };
        const size_t n = std::stoul(get("n")), d = std::stoul(get("dim")), nq = std::stoul(get("nq")), k = std::stoul(get("k"));
        const bool cosine = get("metric") == "cosine";
        const unsigned threads = std::max(1u, static_cast<unsigned>(std::stoul(get("threads"))));
        std::vector<int> thresholds;  // -1 = no filter
        thresholds.push_back(-1);
        {
            std::stringstream ss(a.count("thresholds") ? a["thresholds"] : "");
            std::string item;
            while (std::getline(ss, item, ','))
                if (!item.empty()) thresholds.push_back(std::stoi(item));
        }
        const std::vector<float> base = readFile<float>(get("base"), n * d);
        const std::vector<float> queries = readFile<float>(get("queries"), nq * d);
        const std::vector<uint16_t> buckets = readFile<uint16_t>(get("buckets"), n);
        std::vector<double> norms(cosine ? n : 0);
        for (size_t r = 0; r < norms.size(); r++) norms[r] = std::sqrt(dotD(&base[r * d], &base[r * d], d));

        const size_t cases = thresholds.size();
        std::vector<TopK> tops;  // [query][case]
        tops.reserve(nq * cases);
        for (size_t i = 0; i < nq * cases; i++) tops.emplace_back(k);

        // Queries in blocks of 8 share each streamed base row (it stays in L1 for the 8 dots).
        const size_t block = 8;
        const size_t nblocks = (nq + block - 1) / block;
        auto work = [&](unsigned t) {
            for (size_t b = t; b < nblocks; b += threads) {
                const size_t q0 = b * block, q1 = std::min(nq, q0 + block);
                double qn[block];
                for (size_t q = q0; q < q1; q++) qn[q - q0] = cosine ? std::sqrt(dotD(&queries[q * d], &queries[q * d], d)) : 1;
                for (size_t r = 0; r < n; r++) {
                    const float* x = &base[r * d];
                    const int bucket = buckets[r];
                    for (size_t q = q0; q < q1; q++) {
                        const double dist = cosine ? 1.0 - dotD(&queries[q * d], x, d) / (qn[q - q0] * norms[r]) : l2D(&queries[q * d], x, d);
                        for (size_t c = 0; c < cases; c++) {
                            if (thresholds[c] >= 0 && bucket >= thresholds[c]) continue;
                            TopK& top = tops[q * cases + c];
                            if (dist < top.worst()) top.push(static_cast<int32_t>(r), dist);
                        }
                    }
                }
            }
        };
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; t++) pool.emplace_back(work, t);
        for (auto& th : pool) th.join();

        std::FILE* out = std::fopen(get("out").c_str(), "wb");
        if (!out) throw std::runtime_error("cannot write --out");
        for (size_t c = 0; c < cases; c++)
            for (size_t q = 0; q < nq; q++) {
                const TopK& top = tops[q * cases + c];
                std::fwrite(top.ids.data(), sizeof(int32_t), k, out);
                std::fwrite(top.d.data(), sizeof(double), k, out);
            }
        std::fclose(out);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "groundtruth: %s\n", e.what());
        return 1;
    }
}
