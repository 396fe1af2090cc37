/*
 * For the Wine tests of verify --app: a program that imports cuDNN
 * (cudnn64_9.dll, the fake's import library) as an application built
 * against cuDNN does; it prints what cudnnGetVersion() says.
 */
#include <stddef.h>
#include <stdio.h>

__declspec(dllimport) size_t cudnnGetVersion(void);

int main(void)
{
	printf("%zu\n", cudnnGetVersion());
	return 0;
}
