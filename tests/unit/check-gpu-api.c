/*
 * Compiled only when cudnn.h and cuda.h are found: redeclares every entry
 * point of src/core/gpu-api.h with the official types substituted, so a
 * declaration that drifted from NVIDIA's (a parameter's type or count, the
 * return type) is a compile error ("conflicting types"), and checks the
 * enum values cudnnctl passes.
 */
#include <cuda.h>
#include <cudnn.h>

#define CCTL_GPU_API_OFFICIAL_TYPES
typedef cudnnStatus_t cctl_cudnnStatus;
typedef cudnnHandle_t cctl_cudnnHandle;
typedef cudnnTensorDescriptor_t cctl_cudnnTensorDesc;
typedef cudnnFilterDescriptor_t cctl_cudnnFilterDesc;
typedef cudnnConvolutionDescriptor_t cctl_cudnnConvDesc;
typedef cudnnTensorFormat_t cctl_cudnnTensorFormat;
typedef cudnnDataType_t cctl_cudnnDataType;
typedef cudnnConvolutionMode_t cctl_cudnnConvMode;
typedef cudnnConvolutionFwdAlgo_t cctl_cudnnConvFwdAlgo;
typedef cudnnMathType_t cctl_cudnnMathType;
typedef CUresult cctl_CUresult;
typedef CUdevice cctl_CUdevice;
typedef CUdevice_attribute cctl_CUdeviceAttr;
typedef CUcontext cctl_CUcontext;
typedef CUdeviceptr cctl_CUdeviceptr;
typedef CUuuid cctl_CUuuid;
#include "../../src/core/gpu-api.h"

#define REDECLARE(req, ret, name, params) extern ret name params;
CCTL_CUDNN_FUNCS(REDECLARE)
CCTL_CUDA_FUNCS(REDECLARE)

/* the integer types cudnnctl uses for these enums have their size */
_Static_assert(sizeof(cudnnStatus_t) == sizeof(int), "cudnnStatus_t");
_Static_assert(sizeof(CUresult) == sizeof(int), "CUresult");
_Static_assert(sizeof(CUdeviceptr) == sizeof(unsigned long long), "CUdeviceptr");
_Static_assert(CUDNN_STATUS_SUCCESS == CCTL_CUDNN_STATUS_SUCCESS, "status");
_Static_assert(CUDNN_TENSOR_NCHW == CCTL_CUDNN_TENSOR_NCHW, "NCHW");
_Static_assert(CUDNN_DATA_FLOAT == CCTL_CUDNN_DATA_FLOAT, "float");
_Static_assert(CUDNN_CROSS_CORRELATION == CCTL_CUDNN_CROSS_CORRELATION, "xcorr");
_Static_assert(CUDNN_FMA_MATH == CCTL_CUDNN_FMA_MATH, "FMA math");
_Static_assert(CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM ==
		       CCTL_CUDNN_FWD_ALGO_IMPLICIT_GEMM,
	       "implicit gemm");
_Static_assert(CUDA_SUCCESS == CCTL_CUDA_SUCCESS, "CUDA_SUCCESS");
_Static_assert(CUDA_ERROR_NO_DEVICE == CCTL_CUDA_ERROR_NO_DEVICE, "no device");
_Static_assert(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR == CCTL_CU_ATTR_CC_MAJOR,
	       "cc major");
_Static_assert(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR == CCTL_CU_ATTR_CC_MINOR,
	       "cc minor");

int main(void)
{
	return 0;
}
