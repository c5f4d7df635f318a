#include "core/engine/matrix_store.hpp"

#include <stdexcept>

namespace ts {

const char* matrix_name(MatrixId id) {
  switch (id) {
    case MatrixId::A:
      return "A";
    case MatrixId::B:
      return "B";
    case MatrixId::C:
      return "C";
    case MatrixId::Error:
      return "C - reference";
  }
  return "?";
}

ValueRange MatrixStore::reduce_device(MatrixId, const LodRegion&, Reduce, float*, void*) const {
  throw std::logic_error("this matrix store holds host memory: there is nothing to reduce on a device");
}

void MatrixStore::reduce_device_async(MatrixId, const LodRegion&, Reduce, DeviceOut, unsigned*, void*) const {
  throw std::logic_error("this matrix store holds host memory: there is nothing to reduce on a device");
}

void MatrixStore::element_async(MatrixId, int64_t, int64_t, float*, void*) const {
  throw std::logic_error("this matrix store holds host memory: read elements with element()");
}

namespace {
class HostStore final : public MatrixStore {
 public:
  HostStore(std::shared_ptr<const HostMatrix> a, std::shared_ptr<const HostMatrix> b,
            std::shared_ptr<const HostMatrix> c, std::shared_ptr<const HostMatrix> e)
      : m{std::move(a), std::move(b), std::move(c), std::move(e)} {
    for (const auto& p : m)
      if (!p) throw std::invalid_argument("host store: every matrix is needed");
  }
  int64_t rows(MatrixId id) const override { return get(id).rows; }
  int64_t cols(MatrixId id) const override { return get(id).cols; }
  ValueRange reduce(MatrixId id, const LodRegion& r, Reduce mode, float* out) const override {
    const HostMatrix& x = get(id);
    return lod_reduce(x.data.data(), x.cols, x.rows, x.cols, r, mode, out);
  }
  HostMatrix copy(MatrixId id) const override { return get(id); }
  float element(MatrixId id, int64_t row, int64_t col) const override {
    const HostMatrix& x = get(id);
    if (row < 0 || row >= x.rows || col < 0 || col >= x.cols)
      throw std::out_of_range("element (" + std::to_string(row) + ", " + std::to_string(col) +
                              ") is outside " + matrix_name(id));
    return x.at(row, col);
  }

 private:
  const HostMatrix& get(MatrixId id) const { return *m[int(id)]; }
  std::shared_ptr<const HostMatrix> m[4];
};
}  // namespace

std::shared_ptr<const MatrixStore> make_host_store(std::shared_ptr<const HostMatrix> a,
                                                   std::shared_ptr<const HostMatrix> b,
                                                   std::shared_ptr<const HostMatrix> c,
                                                   std::shared_ptr<const HostMatrix> error) {
  return std::make_shared<HostStore>(std::move(a), std::move(b), std::move(c), std::move(error));
}

}  // namespace ts
