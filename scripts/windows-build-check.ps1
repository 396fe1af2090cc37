# verify --build with the real cl.exe (the CI's windows job, in a Visual
# Studio developer prompt): what the Wine suite's stand-in compiler
# (tests/wine/fakecc.c) cannot show.  Builds the fake cuDNN DLLs of
# tests/fake with cl and rc (VERSIONINFO 9.19.0.99, cudnnGetVersion 91900),
# packs them with their import library as cudnn.lib through
# tests/fixtures/mkcudnn.py, installs that into a fresh root, then:
#   verify --build passes with cl.exe and names the install's header;
#   a stale cudnn_version.h in a folder CL names fails it (exit 29) and
#   the finding names that file.
param([Parameter(Mandatory = $true)][string]$Exe)
$ErrorActionPreference = 'Stop'
function Check($ok, $what) { if (-not $ok) { throw "FAIL: $what" } else { "PASS: $what" } }

Check ([bool]$env:VCINSTALLDIR -and [bool](Get-Command cl.exe -ErrorAction SilentlyContinue)) `
    'a developer prompt: VCINSTALLDIR set and cl.exe on PATH'
$work = Join-Path $env:RUNNER_TEMP 'cudnnctl-build-check'
Remove-Item -Recurse -Force $work -ErrorAction SilentlyContinue
$dlls = Join-Path $work 'fake\lib'
New-Item -ItemType Directory $dlls | Out-Null
$fake = Join-Path $PSScriptRoot '..\tests\fake'
Push-Location $work
try {
    rc /nologo /d 'FAKE_FV=9,19,0,99' /d 'FAKE_FV_STR="9.19.0.99"' /fo fake.res `
        (Join-Path $fake 'fake-version.rc')
    Check ($LASTEXITCODE -eq 0) 'rc fake-version.rc'
    foreach ($part in '', '_adv', '_cnn', '_engines_precompiled', '_engines_runtime_compiled',
        '_graph', '_heuristic', '_ops') {
        $name = "cudnn${part}64_9"
        cl /nologo /LD /DFAKE_VERSION=91900 /DFAKE_CUDART=12080 (Join-Path $fake 'fake-cudnn.c') `
            fake.res "/Fe:$dlls\$name.dll" "/Fo:$work\$name.obj" | Out-Host
        Check ($LASTEXITCODE -eq 0) "cl /LD $name.dll"
    }
    Copy-Item (Join-Path $dlls 'cudnn64_9.lib') (Join-Path $dlls 'cudnn.lib')
} finally {
    Pop-Location
}
$mk = Join-Path $PSScriptRoot '..\tests\fixtures\mkcudnn.py'
$zip = python $mk pack --version 9.19.0.99 --cuda 12 --platform windows-x86_64 --format zip `
    --from $dlls --out $work --manifest (Join-Path $work 'm.json')
$root = Join-Path $work 'root'
& $Exe install $zip --root $root --manifest (Join-Path $work 'm.json') --no-verify
Check ($LASTEXITCODE -eq 0) 'install'
$vdir = Join-Path $root 'versions\9.19.0.99-cuda12'

$doc = & $Exe verify --root $root --build --no-gpu --json | ConvertFrom-Json
$build = $doc.stages | Where-Object { $_.stage -eq 'build' }
Check ($build.status -eq 'pass') "verify --build passes with cl.exe ($($build.finding) $($build.reason))"
Check ($build.finding -like "cl.exe: compiled against $vdir\include\cudnn_version.h*") `
    "the header cl read is the install's ($($build.finding))"

$stale = Join-Path $work 'cuda\include'
New-Item -ItemType Directory $stale | Out-Null
(Get-Content (Join-Path $vdir 'include\cudnn_version.h')) -replace
    '#define CUDNN_MINOR\s+\d+', '#define CUDNN_MINOR 4' |
    Set-Content (Join-Path $stale 'cudnn_version.h')
$env:CL = "/I$stale"
try {
    $doc = & $Exe verify --root $root --build --no-gpu --json | ConvertFrom-Json
    $code = $LASTEXITCODE
} finally {
    Remove-Item Env:CL
}
$build = $doc.stages | Where-Object { $_.stage -eq 'build' }
Check ($code -eq 29) "a stale header first on cl's include path: exit 29 ($code)"
Check ($build.reason -like "*CUDNN_VERSION 90400 in $stale\cudnn_version.h*") `
    "the finding names the stale header ($($build.reason))"
