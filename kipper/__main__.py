from kipper.cli import main

raise SystemExit(main())
