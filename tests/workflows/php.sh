#!/usr/bin/env bash
# PHP workflows through the mount with the shipped, detected rules: a
# Composer project whose one dependency is a package of its own, served by
# a "path" repository (packages/greeter, with its composer.json), packagist
# off and no network: composer install (which writes composer.lock at the
# root and links the package into vendor/), composer dump-autoload, the
# application and a plain PHP test script run through vendor/autoload.php,
# php -l on every file; sources edited with sed -i, the package's too
# (seen at once through vendor/'s link); in a later session composer
# update, with the lock file and without, composer install from the lock
# file and the tests again.
# vendor/ is private (in the store, never in SOURCE); composer.json is only
# read, and the files PHPUnit and PHP-CS-Fixer run (phpunit.xml,
# .php-cs-fixer.php) cannot be made.
source "$SANDY_SRC/tests/workflows/lib.bash"

WF_WORLD=php
wf_need php composer || done_testing

# vendor/ is private where PHP is detected (php.json).
WF_PRIVATE_NAMES+=(vendor)

tpl=$(wf_template php)
mkdir -p "$tpl/src" "$tpl/tests" "$tpl/bin" "$tpl/packages/greeter/src"
# packagist.org off: the only package there is comes from the path
# repository, so nothing is ever fetched.
cat >"$tpl/composer.json" <<'EOF_'
{
    "name": "acme/app",
    "type": "project",
    "repositories": [
        {"packagist.org": false},
        {"type": "path", "url": "packages/greeter"}
    ],
    "require": {
        "acme/greeter": "*"
    },
    "autoload": {
        "psr-4": {"App\\": "src/"}
    },
    "autoload-dev": {
        "psr-4": {"App\\Tests\\": "tests/"}
    }
}
EOF_
# A version of its own, so that "*" (stable) takes it.
cat >"$tpl/packages/greeter/composer.json" <<'EOF_'
{
    "name": "acme/greeter",
    "version": "1.0.0",
    "autoload": {
        "psr-4": {"Acme\\Greeter\\": "src/"}
    }
}
EOF_
cat >"$tpl/packages/greeter/src/Greeter.php" <<'EOF_'
<?php

namespace Acme\Greeter;

final class Greeter
{
    public function greet(string $name): string
    {
        return "hello, " . $name;
    }
}
EOF_
cat >"$tpl/src/App.php" <<'EOF_'
<?php

namespace App;

use Acme\Greeter\Greeter;

final class App
{
    public function run(string $name): string
    {
        return (new Greeter())->greet($name) . "!";
    }
}
EOF_
cat >"$tpl/bin/app.php" <<'EOF_'
<?php

require __DIR__ . '/../vendor/autoload.php';

echo (new App\App())->run($argv[1] ?? 'world'), "\n";
EOF_
cat >"$tpl/tests/AppTest.php" <<'EOF_'
<?php

namespace App\Tests;

use App\App;

final class AppTest
{
    public function testRun(): void
    {
        $got = (new App())->run('x');
        if ($got !== 'hello, x!') {
            throw new \RuntimeException("run('x') gave '$got'");
        }
    }
}
EOF_
# A test runner of the project's own: every test* method of every
# tests/*Test.php class, through the autoloader.
cat >"$tpl/tests/run.php" <<'EOF_'
<?php

require __DIR__ . '/../vendor/autoload.php';

$failed = 0;
foreach (glob(__DIR__ . '/*Test.php') as $file) {
    $class = 'App\\Tests\\' . basename($file, '.php');
    foreach (get_class_methods($class) as $m) {
        if (strncmp($m, 'test', 4) !== 0) {
            continue;
        }
        try {
            (new $class())->$m();
            echo "ok $class::$m\n";
        } catch (\Throwable $e) {
            echo "not ok $class::$m: ", $e->getMessage(), "\n";
            $failed++;
        }
    }
}
exit($failed ? 1 : 0);
EOF_
printf '# app\n' >"$tpl/README.md"
printf '/vendor/\n' >"$tpl/.gitignore"

recipe() {
	# Composer's home and cache in the world's HOME, the network off,
	# and no root warning in the output.
	local composer=(env COMPOSER_HOME="$WF_WORLD_DIR/home/composer"
		COMPOSER_CACHE_DIR="$WF_WORLD_DIR/home/composer-cache"
		COMPOSER_DISABLE_NETWORK=1 COMPOSER_ALLOW_SUPERUSER=1 COMPOSER_NO_AUDIT=1
		composer --no-interaction --no-ansi)
	wf_step "composer install" . "${composer[@]}" install
	wf_private vendor/autoload.php vendor/composer/installed.json vendor/acme/greeter
	wf_step "composer dump-autoload" . "${composer[@]}" dump-autoload
	wf_step_same_output "php bin/app.php" . php bin/app.php
	wf_step_same_output "php app.php" bin php app.php sub
	wf_step_same_output "php -l" . sh -c 'find src tests bin packages -name "*.php" | LC_ALL=C sort | xargs -n1 php -l'
	wf_step_same_output "php tests/run.php" . php tests/run.php
	wf_step "sed -i App.php" src sed -i 's/"!"/"."/' App.php
	wf_step "sed -i AppTest.php" tests sed -i "s/hello, x!/hello, x./" AppTest.php
	wf_step_same_output "php tests/run.php" . php tests/run.php
	wf_step "composer dump-autoload -o" . "${composer[@]}" dump-autoload --optimize
	wf_step "sed -i Greeter.php" packages/greeter/src sed -i 's/hello, /hi, /' Greeter.php
	wf_step "sed -i AppTest.php" tests sed -i "s/hello, x\./hi, x./" AppTest.php
	wf_step_same_output "php tests/run.php" . php tests/run.php
	wf_remount
	wf_step "composer update" . "${composer[@]}" update acme/greeter
	wf_step "rm composer.lock" . rm composer.lock
	wf_step "composer update" . "${composer[@]}" update
	wf_step "rm -rf vendor" . rm -rf vendor
	wf_step "composer install" . "${composer[@]}" install
	wf_private vendor/autoload.php
	wf_step_same_output "php tests/run.php" . php tests/run.php
	wf_step_same_output "php bin/app.php" . php bin/app.php again
	wf_source_private_unchanged
}

after() {
	wf_denied "sed -i composer.json" . composer.json sed -i 's/acme\/app/acme\/x/' composer.json
	wf_denied "sed -i composer.json" packages/greeter packages/greeter/composer.json \
		sed -i 's/1.0.0/1.0.1/' composer.json
	wf_denied "create phpunit.xml" . phpunit.xml sh -c 'echo x > phpunit.xml'
	wf_denied "write .php-cs-fixer.php" . .php-cs-fixer.php \
		sh -c 'printf "<?php\nreturn [];\n" > .php-cs-fixer.php'
}

wf_protect composer.json packages/greeter/composer.json
wf_run php "$tpl" recipe after
done_testing
