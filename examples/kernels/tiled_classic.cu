// The classic shared-memory tiled matrix multiplication, written the way a learner writes it (and the way
// code generators usually produce it): square N x N matrices, one TILE_WIDTH x TILE_WIDTH thread block per
// tile of C, two __syncthreads() per step, ceil(N / TILE_WIDTH) steps with bounds checks.
//
// What TileScope shows:
//     tilescope run --kernel-file examples/kernels/tiled_classic.cu --size 1000
//   - it understands C, A, B and N from the names, TILE_WIDTH as the Tile control (8, 16, 32), and the
//     launch as block (TILE, TILE), grid (ceil(N / TILE), ceil(M / TILE)); N is the only size it is told,
//     so it runs on square shapes only (M = N = K), and says so;
//   - PASS at every size, ragged ones too (1000, 4099): the error heatmap is zero everywhere;
//   - about a sixth of cuBLAS at 4096^3 on an H100 with TILE_WIDTH 32, like the built-in `tiled` kernel;
//   - the tile schedule (which SM computed which tile of C, and when) without changing a line: TileScope
//     compiles the body once more as a device function called from a kernel that stamps %smid and
//     %globaltimer;
//   - main() below is host code: NVRTC compiles device code only, so TileScope leaves it out (and says so).
#include <cstdio>
#include <cuda_runtime.h>

#define TILE_WIDTH 16

__global__ void matmul_kernel(float* C, float* A, float* B, int N)
{
    __shared__ float As[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Bs[TILE_WIDTH][TILE_WIDTH];

    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE_WIDTH + ty;
    int col = blockIdx.x * TILE_WIDTH + tx;
    float sum = 0.0f;

    for (int t = 0; t < (N + TILE_WIDTH - 1) / TILE_WIDTH; ++t) {
        // Load one tile of A and one of B; zero outside the matrices.
        if (row < N && t * TILE_WIDTH + tx < N)
            As[ty][tx] = A[row * N + t * TILE_WIDTH + tx];
        else
            As[ty][tx] = 0.0f;
        if (col < N && t * TILE_WIDTH + ty < N)
            Bs[ty][tx] = B[(t * TILE_WIDTH + ty) * N + col];
        else
            Bs[ty][tx] = 0.0f;
        __syncthreads();  // the whole tile is loaded before anyone reads it

        for (int k = 0; k < TILE_WIDTH; ++k)
            sum += As[ty][k] * Bs[k][tx];
        __syncthreads();  // and fully read before the next step overwrites it
    }
    if (row < N && col < N)
        C[row * N + col] = sum;
}

int main()
{
    const int N = 1024;
    float *A, *B, *C;
    cudaMalloc(&A, N * N * sizeof(float));
    cudaMalloc(&B, N * N * sizeof(float));
    cudaMalloc(&C, N * N * sizeof(float));
    dim3 block(TILE_WIDTH, TILE_WIDTH);
    dim3 grid((N + TILE_WIDTH - 1) / TILE_WIDTH, (N + TILE_WIDTH - 1) / TILE_WIDTH);
    matmul_kernel<<<grid, block>>>(C, A, B, N);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
