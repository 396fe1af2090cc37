/* For test_wine.py: prints the console's output code page ("cp=437"),
 * to see that cudnnctl leaves it as it found it. */
#include <windows.h>
#include <stdio.h>

int main(void)
{
	printf("cp=%u\n", GetConsoleOutputCP());
	return 0;
}
