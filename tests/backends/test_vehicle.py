"""The vehicle-control application."""

from __future__ import annotations

import random

from backend_helpers import env_for, run

from pytest_bfcl.backends.long_context import load_long_context


def test_vehicle_engine_and_doors():
    env = env_for("VehicleControlAPI")
    assert run(env, "startEngine('START')") == [
        {
            "error": "All doors must be locked before starting the engine. Here are the unlocked "
            "doors: driver, passenger, rear_left, rear_right"
        }
    ]
    assert run(env, "lockDoors(False, ['driver', 'passenger', 'rear_left', 'rear_right'])") == [
        {"lockStatus": "locked", "remainingUnlockedDoors": 0}
    ]
    assert run(env, "lockDoors(unlock=False, door=['driver'])") == [
        {"lockStatus": "locked", "remainingUnlockedDoors": 0}
    ]
    assert run(env, "lockDoors(unlock=True, door=['trunk'])") == ["Error during execution: 'trunk'"]
    assert run(env, "startEngine('START')", "pressBrakePedal(0.5)", "startEngine('START')") == [
        {"error": "Brake pedal needs to be pressed when starting the engine."},
        {"brakePedalStatus": "pressed", "brakePedalForce": 500.0},
        {"error": "Must press the brake fully before starting the engine."},
    ]
    assert run(env, "pressBrakePedal(2)", "pressBrakePedal(1)", "startEngine('GO')") == [
        {"error": "Pedal position must be between 0 and 1."},
        {"brakePedalStatus": "pressed", "brakePedalForce": 1000.0},
        {"error": "Invalid ignition mode."},
    ]
    assert run(env, "startEngine('START')") == [
        {"engineState": "running", "fuelLevel": 0.0, "batteryVoltage": 12.6}
    ]
    assert run(env, "displayCarStatus('engine')", "displayCarStatus('x')") == [
        {"engineState": "running"},
        {"error": "Invalid option"},
    ]
    assert run(env, "releaseBrakePedal()", "pressBrakePedal(0)") == [
        {"brakePedalStatus": "released", "brakePedalForce": 0.0},
        {"brakePedalStatus": "released", "brakePedalForce": 0.0},
    ]
    assert run(env, "lockDoors(True, ['driver'])") == [
        {"lockStatus": "unlocked", "remainingUnlockedDoors": 1}
    ]


def test_vehicle_scenario_recomputes_unlocked_doors():
    doors = {
        "driver": "locked",
        "passenger": "locked",
        "rear_left": "unlocked",
        "rear_right": "locked",
    }
    env = env_for("VehicleControlAPI", {"doorStatus": doors, "remainingUnlockedDoors": 4,
                                        "engineState": "running", "brakePedalForce": 1000.0})  # fmt: skip
    api = env.instances["VehicleControlAPI"]
    assert api.remainingUnlockedDoors == 1 and api.engine_state == "running"
    assert run(env, "displayCarStatus('brakePedal')") == [
        {"brakePedalStatus": "released", "brakePedalForce": 1000.0}
    ]


def test_vehicle_fuel_climate_lights_brakes():
    env = env_for("VehicleControlAPI", {"fuelLevel": 10.0})
    assert run(env, "fillFuelTank(-1)", "fillFuelTank(45)", "fillFuelTank(5)") == [
        {"error": "Fuel amount cannot be negative."},
        {"error": "Cannot fill gas above the tank capacity."},
        {"fuelLevel": 15.0},
    ]
    assert run(env, "adjustClimateControl(68, 'fahrenheit', 30, 'cool')") == [
        {"currentACTemperature": 68, "climateMode": "cool", "humidityLevel": 50.0}
    ]
    assert env.instances["VehicleControlAPI"].acTemperature == 20.0
    assert run(env, "adjustClimateControl(20, fanSpeed=101)", "displayCarStatus('climate')") == [
        {"error": "Fan speed must be between 0 and 100."},
        {
            "currentACTemperature": 20.0,
            "fanSpeed": 30,
            "climateMode": "cool",
            "humidityLevel": 50.0,
        },
    ]
    assert run(env, "setHeadlights('auto')", "setHeadlights('on')", "setHeadlights('x')") == [
        {"headlightStatus": "off"},
        {"headlightStatus": "on"},
        {"error": "Invalid headlight mode."},
    ]
    assert run(env, "activateParkingBrake('engage')", "activateParkingBrake('x')") == [
        {"parkingBrakeStatus": "engaged", "_parkingBrakeForce": 500.0, "_slopeAngle": 10.0},
        {"error": "Invalid mode"},
    ]
    assert run(env, "displayCarStatus('parkingBrake')", "activateParkingBrake('release')") == [
        {"parkingBrakeStatus": "engaged", "parkingBrakeForce": 500.0, "slopeAngle": 10.0},
        {"parkingBrakeStatus": "released", "_parkingBrakeForce": 0.0, "_slopeAngle": 10.0},
    ]
    assert run(env, "displayCarStatus('fuel')", "displayCarStatus('battery')") == [
        {"fuelLevel": 15.0},
        {"batteryVoltage": 12.6},
    ]
    assert run(env, "displayCarStatus('doors')")[0]["doorStatus"]["driver"] == "unlocked"
    assert run(env, "displayCarStatus('headlights')") == [{"headlightStatus": "on"}]


def test_vehicle_cruise_navigation_and_info():
    env = env_for("VehicleControlAPI", {"fuelLevel": 10.0})
    assert run(env, "setCruiseControl(60, True, 100)") == [
        {"error": "Start the engine before activating the cruise control."}
    ]
    env.instances["VehicleControlAPI"].engine_state = "running"
    assert run(env, "setCruiseControl(62, True, 80)") == [{"error": "Invalid speed"}]
    assert env.instances["VehicleControlAPI"].distanceToNextVehicle == 80.0  # stored first
    assert run(env, "setCruiseControl(60, True, 100)", "setCruiseControl(0, False, 20)") == [
        {"cruiseStatus": "active", "currentSpeed": 60.0, "distanceToNextVehicle": 100.0},
        {"cruiseStatus": "inactive", "currentSpeed": 0.0, "distanceToNextVehicle": 20.0},
    ]
    assert run(env, "get_current_speed()", "get_outside_temperature_from_google()") == [
        {"currentSpeed": 111.92365689097284},  # documented draws for the default seed
        {"outsideTemperature": 31.29968928699752},
    ]
    assert run(env, "get_outside_temperature_from_weather_com()", "display_log(['a'])") == [
        {"error": 404},
        {"log": ["a"]},
    ]
    assert run(
        env,
        "estimate_drive_feasibility_by_mileage(200)",
        "estimate_drive_feasibility_by_mileage(201)",
    ) == [{"canDrive": True}, {"canDrive": False}]
    assert run(env, "liter_to_gallon(10)", "gallon_to_liter(2)") == [
        {"gallon": 10 * 0.264172},
        {"liter": 2 * 3.78541},
    ]
    assert run(env, "estimate_distance('74532', '83214')", "estimate_distance('1', '2')") == [
        {"distance": 750.0},
        {"error": "distance not found in database."},
    ]
    assert run(env, "get_zipcode_based_on_city('Rivermist')", "get_zipcode_based_on_city('X')") == [
        {"zipcode": "83214"},
        {"zipcode": "00000"},
    ]
    assert run(env, "set_navigation('Home')") == [{"status": "Navigating to Home"}]
    assert env.instances["VehicleControlAPI"].destination == "Home"
    assert run(env, "check_tire_pressure()") == [
        {
            "frontLeftTirePressure": 32.0,
            "frontRightTirePressure": 32.0,
            "rearLeftTirePressure": 30.0,
            "rearRightTirePressure": 30.0,
            "healthy_tire_pressure": True,
            "car_info": {},
        }
    ]
    assert run(env, "find_nearest_tire_shop()") == [
        {"shopLocation": "456 Oakwood Avenue, Rivermist, 83214"}
    ]


def test_vehicle_long_context(data_source):
    tables = load_long_context(data_source.unpacked_root)
    env = env_for("VehicleControlAPI", {}, tables)
    status = run(env, "displayCarStatus('fuel')")[0]
    assert list(status) == ["metadata", "fuelLevel"]
    assert (
        run(env, "activateParkingBrake('engage')")[0]["parkingBrakeInstruction"]
        == (tables["PARKING_BRAKE_INSTRUCTION"])
    )
    weather = run(env, "get_outside_temperature_from_google()")[0]
    assert weather["outsideTemperature"] == random.Random(141053).uniform(-10.0, 40.0)
    assert "outsideTemperature" not in tables["LONG_WEATHER_EXTENSION"]  # the table is not mutated
    assert (
        run(env, "estimate_distance('1', '2')")[0]["intermediaryCities"]
        == tables["INTERMEDIARY_CITIES"]
    )
