# A smoke test of cudnnctl.exe on a real Windows (the CI's windows job):
# what Wine cannot show.  Installs a Windows-layout archive made by
# tests/fixtures/mkcudnn.py into a fresh root, then checks that `current`
# is a real junction to the version, that the user PATH in the registry
# has its bin folder first and that a new process sees it, then switches,
# deactivates and restores the PATH; then a machine-wide root (its DACL,
# the machine PATH).
param([Parameter(Mandatory = $true)][string]$Exe)
$ErrorActionPreference = 'Stop'
function Check($ok, $what) { if (-not $ok) { throw "FAIL: $what" } else { "PASS: $what" } }

$work = Join-Path $env:RUNNER_TEMP 'cudnnctl-smoke'
Remove-Item -Recurse -Force $work -ErrorAction SilentlyContinue
New-Item -ItemType Directory $work | Out-Null
$root = Join-Path $work 'root'
$before = (Get-ItemProperty HKCU:\Environment -Name Path -ErrorAction SilentlyContinue).Path
$mk = Join-Path $PSScriptRoot '..\tests\fixtures\mkcudnn.py'
$zip = python $mk pack --version 9.19.0.99 --cuda 12 --platform windows-x86_64 --format zip `
    --fake-size 4096 --out $work --manifest (Join-Path $work 'm.json')
& $Exe install $zip --root $root --manifest (Join-Path $work 'm.json') --no-verify
Check ($LASTEXITCODE -eq 0) 'install'
$cur = Get-Item (Join-Path $root 'current')
Check ($cur.LinkType -eq 'Junction') "current is a junction ($($cur.LinkType))"
Check ($cur.Target -like '*versions\9.19.0.99-cuda12') "current leads to the version ($($cur.Target))"
$path = (Get-ItemProperty HKCU:\Environment -Name Path).Path
Check ($path.Split(';')[0] -eq (Join-Path $root 'current\bin')) "user PATH starts with current\bin ($path)"
# a new process started the way Explorer starts one reads the registry
$seen = (Start-Process powershell -ArgumentList '-NoProfile', '-Command',
    "[Environment]::GetEnvironmentVariable('Path','User')" -NoNewWindow -Wait -PassThru `
    -RedirectStandardOutput (Join-Path $work 'p.txt'))
Check ((Get-Content (Join-Path $work 'p.txt')) -like "*$root*") 'a new process sees it'
& $Exe deactivate --root $root
Check ($LASTEXITCODE -eq 0) 'deactivate'
& $Exe path restore --root $root
Check ($LASTEXITCODE -eq 0) 'path restore'
$after = (Get-ItemProperty HKCU:\Environment -Name Path -ErrorAction SilentlyContinue).Path
Check ($after -eq $before) 'the user PATH is as it was'

# machine scope (the runner is an administrator): the root cudnnctl makes
# gets a protected DACL, no write for Users or Authenticated Users, and the
# machine PATH gets the entry after the %SystemRoot% ones
$mroot = Join-Path $work 'machine-root'
$mbefore = (Get-ItemProperty 'HKLM:\SYSTEM\CurrentControlSet\Control\Session Manager\Environment' -Name Path).Path
& $Exe install $zip --root $mroot --manifest (Join-Path $work 'm.json') --no-verify --scope machine
Check ($LASTEXITCODE -eq 0) 'install --scope machine'
$acl = Get-Acl $mroot
Check $acl.AreAccessRulesProtected 'the machine root does not inherit (protected DACL)'
$writers = $acl.Access | Where-Object {
    $_.AccessControlType -eq 'Allow' -and
    ($_.FileSystemRights -band [System.Security.AccessControl.FileSystemRights]::Write) -and
    $_.IdentityReference -notmatch 'SYSTEM|Administrators' }
Check ($null -eq $writers) "only SYSTEM and Administrators can write it ($(icacls $mroot))"
$mpath = (Get-ItemProperty 'HKLM:\SYSTEM\CurrentControlSet\Control\Session Manager\Environment' -Name Path).Path
$first = $mpath.Split(';')[0]
Check ($first -notlike "$mroot*") "the machine PATH starts with the system's own entries ($first)"
& $Exe deactivate --root $mroot
Check ($LASTEXITCODE -eq 0) 'deactivate the machine root'
$mafter = (Get-ItemProperty 'HKLM:\SYSTEM\CurrentControlSet\Control\Session Manager\Environment' -Name Path).Path
Check ($mafter -eq $mbefore) 'the machine PATH is as it was'
