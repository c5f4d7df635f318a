#include "kernels/engine/cublas_api.hpp"

#include <dlfcn.h>

#include <stdexcept>

namespace ts {

std::string cublas_library_name() {
  return "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
}

namespace {

struct Loaded {
  CublasApi api;
  std::string error;  // empty when every function was found
};

template <class F>
void find(void* lib, const char* name, F& f, std::string& error) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f && error.empty()) error = cublas_library_name() + " has no " + name;
}

Loaded open_cublas() {
  Loaded l;
  const std::string name = cublas_library_name();
  void* lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string why = lib ? "" : dlerror();
#ifdef TILESCOPE_CUBLAS_DIR
  if (!lib) {
    const std::string path = std::string(TILESCOPE_CUBLAS_DIR) + "/" + name;
    lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) why += "; " + std::string(dlerror());
  }
#endif
  if (!lib) {
    l.error = "cuBLAS could not be opened (" + why + "): install NVIDIA's cuBLAS of CUDA " +
              std::to_string(CUBLAS_VER_MAJOR) + " or put its folder on LD_LIBRARY_PATH";
    return l;
  }
  // Never closed: cuBLAS handles live in thread_local storage until their threads end.
  find(lib, "cublasCreate_v2", l.api.create, l.error);
  find(lib, "cublasDestroy_v2", l.api.destroy, l.error);
  find(lib, "cublasSetStream_v2", l.api.set_stream, l.error);
  find(lib, "cublasSetMathMode", l.api.set_math_mode, l.error);
  find(lib, "cublasSgemm_v2_64", l.api.sgemm_64, l.error);
  return l;
}

}  // namespace

const CublasApi& cublas_api() {
  static const Loaded loaded = open_cublas();
  if (!loaded.error.empty()) throw std::runtime_error(loaded.error);
  return loaded.api;
}

}  // namespace ts
