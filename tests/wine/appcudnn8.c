/*
 * For the Wine tests of verify --app: a program built against cuDNN 8
 * (it imports cudnn64_8.dll, a fake 8.9.7's), as TensorFlow 2.10 on
 * Windows is.
 */
#include <stddef.h>
#include <stdio.h>

__declspec(dllimport) size_t cudnnGetVersion(void);

int main(void)
{
	printf("%zu\n", cudnnGetVersion());
	return 0;
}
