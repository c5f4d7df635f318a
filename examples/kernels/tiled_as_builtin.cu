// The built-in `tiled` kernel (kernels/rungs/03_tiled.cu), written out as a file of its own: 64-bit indices,
// __restrict__ pointers, bounds-checked loads, TILE x TILE blocks. It is here to measure what running a
// kernel as "yours" costs: the same code through NVRTC and the worker process against the built-in compiled
// by nvcc, at the same point (tests/gpu/issue12_device.sh: 4096^3, TILE 32; the goal is within 2 %).
//
// What TileScope shows:
//     tilescope bench --kernel-file examples/kernels/tiled_as_builtin.cu --tiles 32 --shapes 4096
//   - PASS at every shape; M, N and K are separate 64-bit parameters, so any shape runs;
//   - the registers, shared memory and occupancy of the built-in (ptxas reports 32 registers and 8 KiB of
//     shared memory at TILE 32 for both), and its time within the noise.
#define TILE 32

__device__ __forceinline__ float load_or_zero(const float* __restrict__ p, long long r, long long c,
                                              long long rows, long long cols, long long ld)
{
    return (r < rows && c < cols) ? p[r * ld + c] : 0.0f;
}

__global__ void tiled_builtin(const float* __restrict__ A, const float* __restrict__ B,
                              float* __restrict__ C, long long M, long long N, long long K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const long long row = (long long)blockIdx.y * TILE + ty;
    const long long col = (long long)blockIdx.x * TILE + tx;
    const long long steps = (K + TILE - 1) / TILE;
    float acc = 0.0f;
    for (long long s = 0; s < steps; ++s) {
        As[ty][tx] = load_or_zero(A, row, s * TILE + tx, M, K, K);
        Bs[ty][tx] = load_or_zero(B, s * TILE + ty, col, K, N, N);
        __syncthreads();
#pragma unroll
        for (int p = 0; p < TILE; ++p)
            acc += As[ty][p] * Bs[p][tx];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}
