// Bug 2 of 3: K / TILE steps instead of ceil(K / TILE).
//
// The loop walks K / TILE tiles along K, so whenever TILE does not divide K the last, partial tile of A
// and B is never loaded and its products are missing from every element of C.
//
// What TileScope shows:
//     tilescope run --kernel-file examples/kernels/bug_floor_k.cu --m 1000 --n 1000 --k 1000
//   - PASS whenever TILE divides K (1024 with TILE 16, say): the bug hides on the sizes people try first;
//   - FAIL otherwise (K = 1000 with TILE 16 drops 8 of every row's 1000 products): nearly every element of
//     C is wrong, so the error heatmap is non-zero everywhere, by about the size of 8 products;
//   - M, N and K are separate parameters here, so it runs on any shape: drag K past a multiple of the
//     tile and watch the error map light up.
// The built-in teaching kernel `tiled_floork` is the same bug.
#define TILE 16

__global__ void gemm_tiled(const float* A, const float* B, float* C, int M, int N, int K)
{
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    int row = blockIdx.y * TILE + threadIdx.y;
    int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;

    for (int t = 0; t < K / TILE; ++t) {  // BUG: should be (K + TILE - 1) / TILE
        int a_col = t * TILE + threadIdx.x;
        int b_row = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && a_col < K) ? A[row * K + a_col] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (b_row < K && col < N) ? B[b_row * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k)
            acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}
