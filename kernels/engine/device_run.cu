#include "kernels/engine/device_run.cuh"

#include "kernels/engine/cuda_check.cuh"
#include "kernels/engine/heatmap_lod.cuh"
#include "kernels/engine/launch.hpp"
#include "kernels/engine/matrix_ops.cuh"

namespace ts {

DeviceRunMatrices::DeviceRunMatrices(int device, const ProblemSpec& spec, cudaStream_t stream, bool shareable)
    : m_device(device), m_s(spec), m_st(stream), m_shareable(shareable) {}

void DeviceRunMatrices::make_inputs(const RunRequest& req) {
  const ProblemSpec& s = m_s;
  auto alloc = [&](int64_t count) {
    return m_shareable ? PoolBuffer<float>::shareable(size_t(count)) : PoolBuffer<float>(size_t(count), m_st);
  };
  m_A = alloc(s.m * s.k);
  m_B = alloc(s.k * s.n);
  m_C = alloc(s.m * s.n);
  m_R = PoolBuffer<float>(size_t(s.m * s.n), m_st);
  m_a = m_A.get();
  m_b = m_B.get();
  m_c = m_C.get();
  m_r = m_R.get();
  if (s.input == InputKind::File) {
    CUDA_CHECK(cudaMemcpyAsync(m_a, req.a->data.data(), m_A.bytes(), cudaMemcpyHostToDevice, m_st));
    CUDA_CHECK(cudaMemcpyAsync(m_b, req.b->data.data(), m_B.bytes(), cudaMemcpyHostToDevice, m_st));
  } else {
    device_generate(m_a, s.m, s.k, gen_kind(s.input), s.seed, 0, m_st);
    device_generate(m_b, s.k, s.n, gen_kind(s.input), s.seed, 1, m_st);
  }
}

void DeviceRunMatrices::make_reference(const CancelToken& cancel) {
  (void)cancel;
  launch_cublas(GemmArgs{m_a, m_b, m_r, m_s.m, m_s.n, m_s.k}, 0, m_st);
  CUDA_CHECK(cudaStreamSynchronize(m_st));  // A and B are complete before a worker copies them
}

void DeviceRunMatrices::poison_c() {
  CUDA_CHECK(cudaMemsetAsync(m_c, 0xff, m_C.bytes(), m_st));
  CUDA_CHECK(cudaStreamSynchronize(m_st));
}

double DeviceRunMatrices::max_abs_a() {
  return device_max_abs(a_of(m_selected), size_t(m_s.m * m_s.k), m_st);
}
double DeviceRunMatrices::max_abs_b() {
  return device_max_abs(b_of(m_selected), size_t(m_s.k * m_s.n), m_st);
}

// [SECTION] Changing inputs.
float* DeviceRunMatrices::a_of(int set) const {
  return set == 0 ? m_a : m_sets.at(size_t(set - 1)).first.get();
}
float* DeviceRunMatrices::b_of(int set) const {
  return set == 0 ? m_b : m_sets.at(size_t(set - 1)).second.get();
}

void DeviceRunMatrices::make_input_sets(int sets) {
  const ProblemSpec& s = m_s;
  auto alloc = [&](int64_t count) {
    return m_shareable ? PoolBuffer<float>::shareable(size_t(count)) : PoolBuffer<float>(size_t(count), m_st);
  };
  m_sets.clear();
  for (int i = 1; i < sets; ++i) {
    m_sets.emplace_back(alloc(s.m * s.k), alloc(s.k * s.n));
    device_generate(m_sets.back().first.get(), s.m, s.k, GenKind::Random, s.seed, changed_input_stream(i, 0),
                    m_st);
    device_generate(m_sets.back().second.get(), s.k, s.n, GenKind::Random, s.seed, changed_input_stream(i, 1),
                    m_st);
  }
  CUDA_CHECK(cudaStreamSynchronize(m_st));  // complete before a worker copies them
}

void DeviceRunMatrices::select_inputs(int set, const CancelToken& cancel) {
  (void)cancel;
  m_selected = set;
  launch_cublas(GemmArgs{a_of(set), b_of(set), m_r, m_s.m, m_s.n, m_s.k}, 0, m_st);
  CUDA_CHECK(cudaStreamSynchronize(m_st));
}

void DeviceRunMatrices::keep_c() {
  m_kept = PoolBuffer<float>(size_t(m_s.m * m_s.n), m_st);
  CUDA_CHECK(cudaMemcpyAsync(m_kept.get(), m_c, m_kept.bytes(), cudaMemcpyDeviceToDevice, m_st));
  CUDA_CHECK(cudaStreamSynchronize(m_st));
}

int64_t DeviceRunMatrices::c_unchanged() {
  return device_count_same(m_c, m_kept.get(), size_t(m_s.m * m_s.n), m_st);
}

void DeviceRunMatrices::end_input_sets(const CancelToken& cancel) {
  CUDA_CHECK(cudaMemcpyAsync(m_c, m_kept.get(), m_kept.bytes(), cudaMemcpyDeviceToDevice, m_st));
  select_inputs(0, cancel);  // synchronises: the copy is in C before anyone reads it
  m_kept = PoolBuffer<float>();
  m_sets.clear();
}

ErrorStats DeviceRunMatrices::compare(const Tolerance& tolerance) {
  return device_compare(m_c, m_r, m_s.m, m_s.n, tolerance, m_st);
}

int64_t DeviceRunMatrices::unwritten() {
  return device_count_bits(m_c, size_t(m_s.m * m_s.n), 0xffffffffu, m_st);
}

std::shared_ptr<const HostMatrix> DeviceRunMatrices::copy_c() {
  auto c = std::make_shared<HostMatrix>(m_s.m, m_s.n);
  CUDA_CHECK(
      cudaMemcpyAsync(c->data.data(), m_c, c->data.size() * sizeof(float), cudaMemcpyDeviceToHost, m_st));
  CUDA_CHECK(cudaStreamSynchronize(m_st));
  return c;
}

std::shared_ptr<const MatrixStore> DeviceRunMatrices::keep_store() {
  // C - reference from the last launch (what the C heatmap shows).
  PoolBuffer<float> E(size_t(m_s.m * m_s.n), m_st);
  device_subtract(E.get(), m_c, m_r, m_s.m * m_s.n, m_st);
  CUDA_CHECK(cudaStreamSynchronize(m_st));
  DeviceMatrices dm;
  dm.m = m_s.m;
  dm.n = m_s.n;
  dm.k = m_s.k;
  dm.a = std::move(m_A);
  dm.b = std::move(m_B);
  dm.c = std::move(m_C);
  dm.err = std::move(E);
  return make_device_store(m_device, std::move(dm));
}

}  // namespace ts
